"""PDF text extraction: pages in order, repaired text, running heads dropped, problems named."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.vault.pdf import PdfProblem, clean_page_text, drop_running_lines, extract_pdf, place_outline
from tests.pdf_writer import write_pdf


def book(tmp_path: Path, **kwargs: object) -> Path:
    pages = [
        ["Field Guide to the Marsh", "Chapter 1 Birds", "The grey heron waits in the shallows.", "1"],
        ["Field Guide to the Marsh", "Wading birds stand still for hours.", "2"],
        ["Field Guide to the Marsh", "Chapter 2 Fish", "Trout rise at dusk in the reeds.", "3"],
        ["Field Guide to the Marsh", "Pike hunt from cover.", "4"],
    ]
    return write_pdf(tmp_path / "guide.pdf", pages, **kwargs)


def test_pages_come_out_in_order_with_their_numbers(tmp_path: Path) -> None:
    pdf = extract_pdf(book(tmp_path))
    assert [p.number for p in pdf.pages] == [1, 2, 3, 4]
    assert "grey heron waits" in pdf.pages[0].text
    assert "Trout rise at dusk" in pdf.pages[2].text


def test_running_header_and_page_numbers_are_dropped(tmp_path: Path) -> None:
    pdf = extract_pdf(book(tmp_path))
    assert all("Field Guide to the Marsh" not in p.text for p in pdf.pages)
    assert [p.text.splitlines()[-1] for p in pdf.pages] == [
        "The grey heron waits in the shallows.",
        "Wading birds stand still for hours.",
        "Trout rise at dusk in the reeds.",
        "Pike hunt from cover.",
    ]
    assert pdf.dropped_lines == 8


def test_title_from_metadata_else_first_line(tmp_path: Path) -> None:
    assert extract_pdf(book(tmp_path, title="Marsh Life")).title == "Marsh Life"
    # Without a title in the metadata, the first line of the first page (the header is kept
    # out of the text, but a title page's first line is what people call the document).
    one = write_pdf(tmp_path / "one.pdf", [["A Short Note on Herons", "They nest in colonies."]])
    assert extract_pdf(one).title == "A Short Note on Herons"


def test_outline_gives_each_section_its_heading_path(tmp_path: Path) -> None:
    outline = [(0, "Chapter 1 Birds", 0), (1, "Wading", 1), (0, "Chapter 2 Fish", 2), (1, "Pike", 3)]
    pdf = extract_pdf(book(tmp_path, outline=outline))
    assert [p.heading_path for p in pdf.pages] == ["Chapter 1 Birds", "Chapter 1 Birds > Wading", "Chapter 2 Fish", "Chapter 2 Fish > Pike"]


def test_a_heading_printed_mid_page_starts_a_section_there() -> None:
    pages = ["Intro text.\n1.2 Second part\nMore text.", "Next page."]
    sections = place_outline(pages, [(0, 0, "First part"), (0, 0, "Second part")])  # (page, level, title)
    assert sections[0] == ((0, "First part"), (pages[0].index("1.2 Second part"), "Second part"))
    assert sections[1] == ((0, "Second part"),)


def test_ligatures_and_line_end_hyphenation_are_repaired() -> None:
    assert clean_page_text("the \ufb01rst \ufb02oor, e\ufb03cient") == "the first floor, efficient"
    assert clean_page_text("inter-\nnational trade") == "international trade"
    # PDFium's own mark for a hyphenated line end: joined, but a capital keeps its hyphen.
    assert clean_page_text("pack\ufffeages for S\ufffePlus") == "packages for S-Plus"
    assert clean_page_text("line one\r\nline two\rthree") == "line one\nline two\nthree"
    assert clean_page_text("well-Known") == "well-Known"  # not at a line end: untouched


def test_a_line_repeated_in_the_body_is_not_a_running_head() -> None:
    pages = [
        "Header\nbody mentions Header\nmore body here\nlast body line\n7",
        "Header\nanother body\nthe middle part\nlast\n8",
        "Header\nthird body\nmiddle\nend\n9",
    ]
    kept, dropped = drop_running_lines(pages)
    assert kept[0] == "body mentions Header\nmore body here\nlast body line"
    assert dropped == 6


def test_encrypted_pdf_is_reported(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "locked.pdf", [["secret plans"]], encrypted=True)
    with pytest.raises(PdfProblem) as err:
        extract_pdf(path)
    assert err.value.reason == "encrypted"


def test_scan_without_text_layer_is_reported(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "scan.pdf", [[], [], []], image_only=True)
    with pytest.raises(PdfProblem) as err:
        extract_pdf(path)
    assert err.value.reason == "no_text"


@pytest.mark.parametrize("data", [b"%PDF-1.4\nnot really a pdf", b"", b"\x00" * 100])
def test_malformed_pdf_is_reported(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(data)
    with pytest.raises(PdfProblem) as err:
        extract_pdf(path)
    assert err.value.reason == "malformed"


def test_truncated_pdf_is_read_or_reported_never_raised_otherwise(tmp_path: Path) -> None:
    data = book(tmp_path).read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) * 2 // 3])
    try:
        pdf = extract_pdf(cut)
    except PdfProblem as exc:
        assert exc.reason in ("malformed", "no_text")
    else:
        assert pdf.pages  # PDFium rebuilt what it could


def test_contents_and_index_entries_are_dropped() -> None:
    page = "Contents\n1 Introduction . . . . . . . . . 1\n2.2 Fixed-width files . . . . . 26\nA.1 Notes ........ iv\nSee section 2.2... for more."
    assert clean_page_text(page) == "Contents\nSee section 2.2... for more."


def test_japanese_and_chinese_text_comes_out_of_a_composite_font(tmp_path: Path) -> None:
    from tests.pdf_writer import make_cid_pdf

    path = tmp_path / "cjk.pdf"
    path.write_bytes(make_cid_pdf([["東京都の天気は晴れです。", "Кириллица и ελληνικά"], ["北京今天下雨。"]]))
    pdf = extract_pdf(path)
    assert [p.text for p in pdf.pages] == ["東京都の天気は晴れです。\nКириллица и ελληνικά", "北京今天下雨。"]
    assert pdf.title == "東京都の天気は晴れです。"  # a title without spaces, as CJK writes it


def test_cjk_lines_the_typesetter_wrapped_are_joined_but_headings_and_paragraph_ends_are_kept() -> None:
    from core.vault.pdf import join_cjk_wraps

    page = "图片处理指南\n使用这个命令可以把文件夹中的所有图片压\n缩成一个归档文件，然后上传到服务器。\n默认情况下，原始文件会被保留。"
    assert join_cjk_wraps(page) == "图片处理指南\n使用这个命令可以把文件夹中的所有图片压缩成一个归档文件，然后上传到服务器。\n默认情况下，原始文件会被保留。"
    # English lines keep their line ends (a space to the search), and so does a line that ends a sentence.
    latin = "The quick brown fox jumps over the lazy\ndog and runs away."
    assert join_cjk_wraps(latin) == latin
    ended = "东京的天气很好，今天没有下雨。\n明天也一样"
    assert join_cjk_wraps(ended) == ended


def test_a_real_cjk_pdf_without_tounicode_comes_out_whole() -> None:
    # ReportLab with Adobe's predefined CMaps (tools/make_cjk_pdf.py): PDFium maps the codes itself.
    pdf = extract_pdf(Path(__file__).resolve().parents[2] / "fixtures" / "pdf" / "cjk-manual.pdf")
    assert pdf.title == "サーバー管理の手引き"
    assert [p.number for p in pdf.pages] == [1, 2]
    assert "サーバーを再起動してください。" in pdf.pages[0].text
    assert "所有图片压缩成一个归档文件" in pdf.pages[1].text
    assert pdf.pages[1].text.startswith("图片处理指南\n")  # the heading stays a line of its own
