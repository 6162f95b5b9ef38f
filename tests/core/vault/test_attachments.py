"""Attachments become documents: page-aware chunks, plain text, folder confidentiality."""

from __future__ import annotations

from pathlib import Path

from core.base.models import SkipReason
from core.vault.attachments import (
    AttachmentSource,
    FolderSettings,
    attachment_kind,
    file_version,
    parse_attachment,
    units_document,
)
from core.vault.chunker import ChunkLimits
from core.vault.extractor import PdfExtractor
from core.vault.kinds import KindText as PdfText
from core.vault.pdf import PdfPage
from tests.pdf_writer import write_pdf


def source(path: Path, rel: str, level: str = "internal") -> AttachmentSource:
    st = path.stat()
    return AttachmentSource("v", rel, path, st.st_size, st.st_mtime_ns, file_version(path), level)


def test_kinds() -> None:
    assert attachment_kind("a/B.PDF") == "pdf"
    assert attachment_kind("notes.txt") == "txt"
    assert attachment_kind("n.md") is None and attachment_kind("x.docx") == "docx" and attachment_kind("x.xlsx") is None


def test_chunks_stay_on_their_page_and_carry_page_and_section(tmp_path: Path) -> None:
    long_page = "\n".join(f"Line {i} about herons and their long legs." for i in range(60))
    pdf = PdfText(
        "Marsh",
        (
            PdfPage(1, "Intro about the marsh.", ((0, "Preface"),)),
            PdfPage(2, long_page, ((0, "Birds"), (long_page.index("Line 30"), "Birds > Herons"))),
            PdfPage(3, "Fish of the reeds.", ((0, "Fish"),)),
        ),
        0,
    )
    path = tmp_path / "m.pdf"
    path.write_bytes(b"%PDF")
    doc = units_document(source(path, "m.pdf"), pdf, ChunkLimits(400, 800))
    assert doc.title == "Marsh" and doc.doc_type == "pdf"
    assert [c.ordinal for c in doc.chunks] == list(range(len(doc.chunks)))
    assert doc.chunks[0].page == 1 and doc.chunks[-1].page == 3
    on_two = [c for c in doc.chunks if c.page == 2]
    assert len(on_two) > 2  # a long page is cut in several chunks
    assert all(c.text in long_page for c in on_two)  # none reaches into another page
    assert on_two[0].heading_path == "Birds" and on_two[-1].heading_path == "Birds > Herons"
    assert next(c for c in on_two if c.text.startswith("Line 30")).heading_path == "Birds > Herons"


def test_pdf_through_the_extractor(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "guide.pdf", [["Herons nest in colonies."], ["Trout rise at dusk."]], title="Marsh")
    with PdfExtractor(60, isolate=False) as ex:
        doc = parse_attachment(source(path, "guide.pdf", "restricted"), ex)
    assert [(c.page, c.text) for c in doc.chunks] == [(1, "Herons nest in colonies."), (2, "Trout rise at dusk.")]
    assert doc.confidentiality == "restricted"
    assert doc.document_version == file_version(path)


def test_unreadable_pdf_becomes_a_skip_with_its_reason(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "scan.pdf", [[], []], image_only=True)
    with PdfExtractor(60, isolate=False) as ex:
        got = parse_attachment(source(path, "scan.pdf"), ex)
    assert got.reason == SkipReason.NO_TEXT and "OCR" in got.detail


def test_text_file_chunks_index_its_own_bytes(tmp_path: Path) -> None:
    raw = ("Shopping list\n\n" + "Buy basil and tomatoes for the soup. " * 60).encode()
    path = tmp_path / "list.txt"
    path.write_bytes(raw)
    with PdfExtractor(60, isolate=False) as ex:
        doc = parse_attachment(source(path, "list.txt"), ex, ChunkLimits(500, 1000))
    assert doc.title == "list" and len(doc.chunks) > 1
    for c in doc.chunks:
        assert c.page is None and raw[c.start_byte : c.end_byte].decode() == c.text


def test_binary_text_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"abc\x00def")
    with PdfExtractor(60, isolate=False) as ex:
        assert parse_attachment(source(path, "x.txt"), ex).reason == SkipReason.BINARY


def test_folder_settings_nearest_wins_and_fail_closed(tmp_path: Path) -> None:
    (tmp_path / "private" / "inner").mkdir(parents=True)
    (tmp_path / "open").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "private" / ".cairn.yaml").write_text("confidentiality: restricted\n")
    (tmp_path / "private" / "inner" / ".cairn.yaml").write_text("confidentiality: public\n")
    (tmp_path / "open" / ".cairn.yaml").write_text("other: 1\n")
    (tmp_path / "broken" / ".cairn.yaml").write_text("confidentiality: [unclosed\n")
    s = FolderSettings(tmp_path)
    assert s.confidentiality("top.pdf") == "internal"
    assert s.confidentiality("private/a.pdf") == "restricted"
    assert s.confidentiality("private/deeper/a.pdf") == "restricted"
    assert s.confidentiality("private/inner/a.pdf") == "public"
    assert s.confidentiality("open/a.pdf") == "internal"
    assert s.confidentiality("broken/a.pdf") == "restricted"


def test_counts_and_their_sentence() -> None:
    from core.base.models import SkippedFile
    from core.vault.attachments import count_attachments, describe_attachments

    counts = count_attachments(
        ["a.md", "b.pdf", "c.PDF", "d.txt"],
        [SkippedFile("e.pdf", SkipReason.ENCRYPTED, ""), SkippedFile("f.pdf", SkipReason.NO_TEXT, ""), SkippedFile("g.md", SkipReason.BINARY, "")],
    )
    assert [(c.kind, c.indexed, c.skipped) for c in counts] == [("pdf", 2, (("encrypted", 1), ("no_text", 1))), ("txt", 1, ())]
    assert describe_attachments(counts) == "2 PDFs indexed, 2 skipped (encrypted 1, no_text 1); 1 text file indexed"
    assert count_attachments(["a.md"], []) == () and describe_attachments(()) == ""
