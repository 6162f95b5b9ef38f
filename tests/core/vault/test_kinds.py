"""Every kind beside notes: Word, e-books, web pages, mail, chat exports — read by their libraries."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from core.vault import mail_text
from core.vault.kinds import KindText, kind_of
from core.vault.pdf import PdfProblem
from core.vault.readers import extract
from tests.kinds_writer import (
    chatgpt_export,
    claude_export,
    with_zip_member,
    write_docx,
    write_epub,
    write_json,
    write_mbox,
)

ARTICLE = """<!doctype html><html><head><title>How herons fish | Bird Blog</title>
<link rel="canonical" href="https://birds.example.org/herons-fish"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> NAVIGATION MENU ITEMS</nav>
<div id="cookie-banner" class="cookie consent">We use COOKIES to improve your experience. Accept all?</div>
<article><h1>How herons fish</h1>
<p>Grey herons stand motionless in shallow water for long minutes, waiting for a fish to swim within reach.
When one does, the heron strikes with its dagger-like bill faster than the eye can follow.</p>
<h2>Where they hunt</h2>
<p>They prefer the margins of lakes, slow rivers and estuaries, where the water is no deeper than their legs
are long. In winter they move to the coast when inland waters freeze over for weeks.</p>
<p>Young herons miss most of their strikes in the first months, and many do not survive their first winter
because they cannot yet catch enough fish to stay warm through the cold nights.</p>
</article>
<footer class="footer">FOOTER COPYRIGHT 2024 Bird Blog. All rights reserved. Share on social media.</footer>
</body></html>"""


def text_of(got: KindText) -> str:
    return "\n".join(p.text for p in got.pages)


def paths_of(got: KindText) -> list[str]:
    return [h for p in got.pages for _, h in p.sections]


def test_kind_names() -> None:
    assert kind_of("a/Report.DOCX").name == "docx"  # type: ignore[union-attr]
    assert kind_of("saved/page.htm").name == "html"  # type: ignore[union-attr]
    assert kind_of("mail/box.mbox").name == "email"  # type: ignore[union-attr]
    assert kind_of("export/conversations.json").name == "chat"  # type: ignore[union-attr]
    assert kind_of("other.json") is None and kind_of("sheet.xlsx") is None and kind_of("n.md") is None
    assert kind_of("notes.md.pdf").name == "pdf"  # type: ignore[union-attr]  # the last suffix decides
    assert kind_of("saved.pdf/readme") is None and kind_of("Makefile") is None  # a folder's suffix is not the file's


def test_docx_headings_tables_and_no_comments_or_deletions(tmp_path: Path) -> None:
    got = extract("docx", write_docx(tmp_path / "report.docx"))
    text = text_of(got)
    assert got.title == "Quarterly Report"
    assert "Binoculars | 300 | Ana" in text and "Boat hire | 900 | Ben" in text  # a table row is a line
    assert "zebra" not in text and "walrus" not in text  # the comment and the tracked deletion
    assert "Counts were made at dawn from the northern hide." in text  # the tracked insertion reads on
    assert "Budget > Field methods" in paths_of(got) and "Staffing" in paths_of(got)


def test_docx_damaged_or_protected_is_skipped_with_a_reason(tmp_path: Path) -> None:
    good = write_docx(tmp_path / "good.docx").read_bytes()
    cut = tmp_path / "cut.docx"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(PdfProblem) as info:
        extract("docx", cut)
    assert info.value.reason == "malformed"
    ole = tmp_path / "locked.docx"
    ole.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    with pytest.raises(PdfProblem) as info:
        extract("docx", ole)
    assert info.value.reason == "encrypted"


def test_zip_bomb_is_refused_before_unpacking(tmp_path: Path) -> None:
    bomb = with_zip_member(write_docx(tmp_path / "bomb.docx"), "word/media/huge.bin", b"\0" * (60 * 1024 * 1024))
    with pytest.raises(PdfProblem) as info:
        extract("docx", bomb)
    assert info.value.reason == "too_large" and "zip bomb" in str(info.value)


def test_epub_chapters_nest_under_the_table_of_contents(tmp_path: Path) -> None:
    got = extract("epub", write_epub(tmp_path / "book.epub", chapters=4))
    assert got.title == "Marsh Birds of Europe"
    assert [p.number for p in got.pages] == [1, 2, 3, 4]  # the nav page has no chapter text of its own
    assert "Part One > Chapter 2 > Nesting" in paths_of(got) and "Chapter 4 > Feeding" in paths_of(got)
    assert "reed bed number 14" in got.pages[1].text


def test_epub_with_drm_is_skipped_but_font_obfuscation_is_not(tmp_path: Path) -> None:
    enc = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">'
        '<enc:EncryptedData><enc:EncryptionMethod Algorithm="{}"/></enc:EncryptedData></encryption>'
    )
    fonts = with_zip_member(write_epub(tmp_path / "fonts.epub"), "META-INF/encryption.xml", enc.format("http://www.idpf.org/2008/embedding").encode())
    assert extract("epub", fonts).pages
    drm = with_zip_member(write_epub(tmp_path / "drm.epub"), "META-INF/encryption.xml", enc.format("http://www.w3.org/2001/04/xmlenc#aes128-cbc").encode())
    rights = with_zip_member(write_epub(tmp_path / "adobe.epub"), "META-INF/rights.xml", b"<rights/>")
    for path in (drm, rights):
        with pytest.raises(PdfProblem) as info:
            extract("epub", path)
        assert info.value.reason == "encrypted" and "DRM" in str(info.value)


def test_entity_expansion_in_an_epub_is_not_expanded(tmp_path: Path) -> None:
    laughs = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    laughs += "".join(f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * 10 + '">' for i in range(3, 10)) + "]>"
    book = write_epub(tmp_path / "lol.epub")
    with_zip_member(book, "META-INF/encryption.xml", (laughs + "<encryption>&lol9;</encryption>").encode())
    tracemalloc.start()
    try:
        with pytest.raises(PdfProblem):  # unreadable encryption.xml fails closed: counted as DRM
            extract("epub", book)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 1024 * 1024


def test_html_keeps_the_article_title_and_source(tmp_path: Path) -> None:
    page = tmp_path / "herons.html"
    page.write_text(ARTICLE, "utf-8")
    got = extract("html", page)
    text = text_of(got)
    assert got.title == "How herons fish"
    assert text.startswith("Source: https://birds.example.org/herons-fish")
    assert "dagger-like bill" in text and "How herons fish > Where they hunt" in paths_of(got)
    assert "NAVIGATION" not in text and "COOKIES" not in text and "FOOTER" not in text


def test_mhtml_page_is_read_through_its_html_part(tmp_path: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Snapshot-Content-Location"] = "https://birds.example.org/herons-fish"
    msg.set_content(ARTICLE, subtype="html")
    page = tmp_path / "herons.mhtml"
    page.write_bytes(msg.as_bytes())
    assert "dagger-like bill" in text_of(extract("html", page))


def test_mbox_one_unit_per_message_quotes_and_signatures_folded(tmp_path: Path) -> None:
    report = write_docx(tmp_path / "r.docx").read_bytes()
    box = write_mbox(tmp_path / "mail.mbox", 1000, attachments={500: ("survey.docx", report)})
    got = extract("email", box)
    assert len(got.pages) == 1001  # 1,000 messages and one attached Word document
    first = got.pages[0]
    assert first.sections[0][1] == "Survey 1: sighting of species 1 (2024-01-02)"
    assert first.text.startswith("From: Observer 1 <obs1@example.org>\nTo: team@example.org")
    text = text_of(got)
    assert "lemur" not in text and "okapi" not in text and "someone wrote" not in text
    assert "Observer 999 counted 2997 avocets" in text
    assert "Survey 500: sighting of species 500 (2024-01-25) > survey.docx > Budget" in paths_of(got)


def test_single_eml_takes_subject_and_date(tmp_path: Path) -> None:
    from tests.kinds_writer import message

    eml = tmp_path / "note.eml"
    eml.write_bytes(message(7).as_bytes())
    got = extract("email", eml)
    assert got.title == "Survey 7: sighting of species 7" and got.date == "2024-01-08"


def test_mbox_is_streamed_a_huge_line_costs_one_message_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mail_text, "MAX_MESSAGE_BYTES", 1024 * 1024)
    box = write_mbox(tmp_path / "big.mbox", 200)
    with box.open("ab") as fh:  # a message with one 24 MB line, then more messages
        fh.write(b"From x@example.org Mon Jan  1 00:00:00 2024\nSubject: huge\n\n" + b"a" * (24 * 1024 * 1024) + b"\n\n")
    write_mbox(tmp_path / "more.mbox", 5)
    with box.open("ab") as fh:
        fh.write((tmp_path / "more.mbox").read_bytes())
    tracemalloc.start()
    try:
        got = extract("email", box)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(got.pages) == 206 and any("only its beginning was read" in n for n in got.notes)
    assert peak < 12 * 1024 * 1024, peak  # far below the 26 MB file


def test_chat_exports_both_services_turns_as_sections(tmp_path: Path) -> None:
    (tmp_path / "gpt").mkdir()
    gpt = extract("chat", write_json(tmp_path / "gpt" / "conversations.json", chatgpt_export(200)))
    assert len(gpt.pages) == 200 and gpt.title == "ChatGPT conversations"
    assert "You are a helpful assistant" not in text_of(gpt)  # system turns left out
    assert "Cactus care 7 (2023-11-21) > 2. ChatGPT" in paths_of(gpt)
    claude = extract("chat", write_json(tmp_path / "conversations.json", claude_export(200)))
    assert len(claude.pages) == 200 and claude.title == "Claude conversations"
    assert "underproofed by 4 hours" in claude.pages[2].text and "Sourdough question 3 (2024-05-01) > 2. Claude" in paths_of(claude)


def test_not_a_chat_export_is_malformed(tmp_path: Path) -> None:
    for body in ('{"settings": true}', "[1, 2", "[]"):
        path = tmp_path / "conversations.json"
        path.write_text(body, "utf-8")
        with pytest.raises(PdfProblem) as info:
            extract("chat", path)
        assert info.value.reason in ("malformed", "no_text")


PY_DOC = Path("/usr/share/doc/python3-doc/html")


@pytest.mark.skipif(not (PY_DOC / "library" / "json.html").exists(), reason="Debian's python3-doc is not installed")
def test_real_sphinx_page_keeps_its_whole_body_and_no_navigation() -> None:
    got = extract("html", PY_DOC / "library" / "json.html")
    text = text_of(got)
    assert got.title == "json — JSON encoder and decoder"
    assert "json — JSON encoder and decoder > Basic Usage" in paths_of(got)
    assert "object_pairs_hook" in text and len(text) > 15_000  # the whole reference, not one definition
    assert "Previous topic" not in text and "Report a Bug" not in text and "¶" not in text


def test_encoded_subject_and_an_html_only_body_with_its_quote_folded(tmp_path: Path) -> None:
    eml = tmp_path / "cafe.eml"
    eml.write_bytes(
        b"Subject: =?utf-8?q?Caf=C3=A9_menu?=\r\nFrom: a@example.org\r\nDate: Tue, 5 Mar 2024 10:00:00 +0100\r\n"
        b"Content-Type: text/html; charset=utf-8\r\n\r\n"
        b"<p>The new menu has a lentil soup.</p><blockquote>QUOTED earlier pangolin</blockquote>"
    )
    got = extract("email", eml)
    assert got.title == "Café menu" and paths_of(got) == ["Café menu (2024-03-05)"]
    assert "lentil soup" in text_of(got) and "pangolin" not in text_of(got)
