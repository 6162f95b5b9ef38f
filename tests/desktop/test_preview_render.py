"""The Preview renders Obsidian's markdown: callout boxes, tables, italics, and nothing unsafe or remote.

A real QTextBrowser (offscreen) shows `core.vault.render_html`'s output, and a real Preview
shows the construct corpus (`tests/fixtures/obsidian_constructs`) from a real index.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument, QTextTable
from PySide6.QtWidgets import QTextBrowser

from core.vault.render_html import reflow, render_html
from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.note_text import START, prepare
from desktop.panels.preview_doc import MAX_RENDERED_CHARS, fill_document
from tests.desktop.helpers import index_vault

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fixtures" / "obsidian_constructs"
V = "obsidian_constructs"


class RecordingBrowser(QTextBrowser):
    """A browser that notes every resource the document asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.requested: list[str] = []

    def loadResource(self, kind: int, url: QUrl | str) -> Any:  # noqa: N802 - Qt's name
        self.requested.append(url.toString() if isinstance(url, QUrl) else str(url))
        return super().loadResource(kind, url)


def tables(doc: QTextDocument) -> list[QTextTable]:
    found: list[QTextTable] = []
    frames = [doc.rootFrame()]
    while frames:
        frame = frames.pop()
        if isinstance(frame, QTextTable):
            found.append(frame)
        frames.extend(frame.childFrames())
    return found


def shown(qtbot: Any, markdown: str) -> RecordingBrowser:
    browser = RecordingBrowser()
    qtbot.addWidget(browser)
    browser.resize(600, 500)
    doc = QTextDocument(browser)
    browser.setDocument(doc)  # the document asks the browser for its resources
    fill_document(doc, markdown, dark=False, room=560)
    browser.show()
    return browser


def test_a_callout_is_a_titled_box_and_a_table_a_table(qtbot: Any) -> None:
    browser = shown(qtbot, "> [!tip]+ Keep it short\n> Body text.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    doc = browser.document()
    boxes = tables(doc)
    assert len(boxes) == 2
    callout, table = sorted(boxes, key=lambda t: t.firstPosition())
    assert (callout.rows(), callout.columns()) == (1, 1) and (table.rows(), table.columns()) == (2, 2)
    box_text = doc.toPlainText()[callout.firstPosition() : callout.lastPosition()]
    assert "Keep it short" in box_text and "Body text." in box_text and "[!tip]" not in doc.toPlainText()
    assert callout.format().background().color().name() != "#000000"  # a coloured box, not a bare quote


def test_emphasis_is_italic_not_underlined_and_highlights_are_marked(qtbot: Any) -> None:
    browser = shown(qtbot, "Some _emphasis_ and ==marked== words.")
    doc = browser.document()
    cursor = doc.find("emphasis")
    assert cursor.charFormat().fontItalic() and not cursor.charFormat().fontUnderline()
    assert doc.find("marked").charFormat().background().color().name() == "#fff3a3"
    assert "==" not in doc.toPlainText() and "_" not in doc.toPlainText()


def test_no_script_and_no_remote_loads(qtbot: Any, tmp_path: Path) -> None:
    local = tmp_path / "pic.png"
    shutil.copy(REPO / "tests" / "fixtures" / "link_vault" / "images" / "cat.png", local)
    markdown = (
        '<script>alert("x")</script>\n\n<img src="https://example.org/t.gif" onerror="alert(1)">\n\n'
        f"![web](https://example.org/remote.png) ![here](<{local.as_uri()}>)\n\n"
        '<a href="javascript:alert(1)">bad</a> <span style="background-image:url(https://example.org/x)">s</span>'
    )
    html = render_html(markdown)
    assert "<script" not in html and "onerror" not in html and "javascript:" not in html and "url(" not in html
    browser = shown(qtbot, markdown)
    qtbot.wait(50)
    assert not [u for u in browser.requested if u.startswith(("http:", "https:"))]
    assert any(u.startswith("file:") for u in browser.requested)  # the vault's own image does load
    assert "alert" not in browser.document().toPlainText()


def test_code_wraps_and_there_is_no_horizontal_scroll_bar(qtbot: Any) -> None:
    long_line = "x = " + " + ".join(f"value_{i}" for i in range(80))
    browser = shown(qtbot, f"```python\n{long_line}\n```\n\n| wide | table |\n|---|---|\n| {'word ' * 60} | b |\n")
    qtbot.wait(50)
    assert browser.horizontalScrollBar().maximum() == 0
    assert "value_79" in browser.document().toPlainText()


def test_pdf_page_line_breaks_reflow_without_moving_positions() -> None:
    page = "A line broken\nby the PDF layout.\n\nA new paragraph."
    flowed = reflow(page)
    assert flowed == "A line broken by the PDF layout.\n\nA new paragraph."
    assert len(flowed) == len(page)


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]) -> MainWindow:
    vault = tmp_path / V
    shutil.copytree(CORPUS, vault)
    controller = make_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, vault)
    return win


def test_the_preview_shows_the_construct_corpus_as_obsidian_does(window: MainWindow) -> None:
    preview = window.preview
    assert preview.open_note(V, "Constructs.md", "Tables")
    doc = preview.browser.document()
    text = doc.toPlainText()
    prose = text.split("Prose around")[0]  # everything before the code section
    for raw in ("[!", "%%", "==", "^para-one", "^table-id", "[[", "]]", "<span", "&amp;", "|---"):
        assert raw not in prose, raw
    assert "Keep it short" in text and "Completed task" in text and "☐ An open task" in text and "☑ A finished task" in text
    assert text.count("lucide-send.svg") == 0  # an icon of Obsidian's app, not of the vault: left out
    assert "[!tip] this is code, not a callout" in text  # code as written
    assert 'href="cairn-note:Task%20formats#Task%20lists"' in doc.toHtml()  # a table cell's `\|` link still leads there
    assert preview.chunk_range is not None
    start, end = preview.chunk_range
    assert "Completed task" in text[start:end]  # the hit's chunk is still found and marked
    assert "CAIRNCHUNK" not in text


def test_a_chunk_starting_at_a_callout_is_marked_without_breaking_the_callout(qtbot: Any) -> None:
    raw = b"Intro paragraph.\n\n> [!warning] Careful\n> Body of the warning.\n\nAfter.\n"
    start = raw.index(b"> [!warning]")
    note = prepare(raw, start, raw.index(b"After."))
    browser = shown(qtbot, note.markdown)
    doc = browser.document()
    assert len(tables(doc)) == 1 and "[!warning]" not in doc.toPlainText()
    assert "Careful" in doc.toPlainText() and START in doc.toPlainText()  # the marker the Preview then takes out


def test_a_huge_note_goes_to_qts_own_reader(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def too_slow(markdown: str, *, dark: bool = False) -> str:
        raise AssertionError("a huge note must not hold the UI thread in the Python parser")

    monkeypatch.setattr("desktop.panels.preview_doc.render_html", too_slow)
    markdown = "A line of a very long note with ==marks== and [[links]].\n\n" * 5000
    assert len(markdown) > MAX_RENDERED_CHARS
    browser = shown(qtbot, markdown)
    assert "A line of a very long note" in browser.document().toPlainText()


def test_bare_web_addresses_are_links(qtbot: Any) -> None:
    browser = shown(qtbot, "See https://example.org/docs and www.python.org today.")
    html = browser.document().toHtml()
    assert 'href="https://example.org/docs"' in html and 'href="http://www.python.org"' in html


WIDE_NOTES = ("Quick Reference.md", "How To/How to style buttons.md", "Scripting/Placeholders.md")  # a 611-char table row, an 859-char code line


def test_real_notes_with_wide_tables_and_code_need_no_horizontal_scroll_at_1024x640(
    qtbot: Any, tmp_path: Path, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    source = next((p / "shared/data/vaults" for p in REPO.parents if (p / "shared/data/vaults").is_dir()), Path("/nonexistent")) / "obsidian-tasks-docs"
    if not all((source / rel).is_file() for rel in WIDE_NOTES):
        pytest.skip("obsidian-tasks-docs is not here")
    vault = tmp_path / "docs"
    for rel in WIDE_NOTES:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, vault / rel)
    controller = make_controller()
    window = make_window(controller)
    window.resize(1024, 640)
    index_vault(qtbot, controller, vault)
    preview = window.preview
    for rel in WIDE_NOTES:
        assert preview.open_note("docs", rel)
        qtbot.wait(50)  # the document lays out at the viewport's width
        assert preview.browser.horizontalScrollBar().maximum() == 0, rel
