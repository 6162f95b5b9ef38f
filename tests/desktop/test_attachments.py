"""A PDF in the vault, seen from the app: the hit says its page, the Preview shows that page
with the chunk marked, and the PDF opens at the page in the system viewer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl

from desktop.actions import wikilink
from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.panels.hit_menu import hit_menu
from desktop.state import describe_status, health_rows
from tests.desktop.helpers import Recorder, index_vault, search_and_wait
from tests.pdf_writer import write_pdf


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "marsh"
    root.mkdir()
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    pages = [
        ["Marsh Guide", "Herons wait in the shallows for fish.", "1"],
        ["Marsh Guide", "Reed beds shelter many birds.", "Bitterns boom at night from the reed beds.", "2"],
        ["Marsh Guide", "Tench feed on the muddy bottom.", "3"],
    ]
    write_pdf(root / "docs" / "guide.pdf", pages, title="Marsh Guide", outline=[(0, "Birds", 0), (0, "Fish", 2)])
    write_pdf(root / "docs" / "locked.pdf", [["secret"]], encrypted=True)
    write_pdf(root / "docs" / "scan.pdf", [[], []], image_only=True)  # pages of ink, no text layer
    (root / "docs" / "broken.pdf").write_bytes(b"%PDF-1.7\ngarbage, then the download stopped")
    (root / "docs" / "todo.txt").write_text("# not a heading in a text file\n\nCall the plumber about the leaking tap.\n")
    return root


@pytest.fixture
def window(qtbot: Any, make_controller: Callable[..., AppController], vault: Path) -> MainWindow:
    controller = make_controller()
    win = MainWindow(controller, vault)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    qtbot.waitExposed(win)
    index_vault(qtbot, controller, vault)
    return win


def test_pdf_hit_previews_its_page_with_the_chunk_marked(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, "bitterns")
    hit = window.controller.selected
    assert hit is not None and hit.chunk.rel_path == "docs/guide.pdf" and hit.page == 2
    preview = window.preview
    qtbot.waitUntil(lambda: preview.chunk_range is not None)
    text = preview.browser.document().toPlainText()
    start, end = preview.chunk_range
    assert "Bitterns boom at night" in text[start:end]
    assert "Herons" not in text and "Tench" not in text  # only page 2 is shown
    assert "Marsh Guide" not in text  # the running header was dropped at indexing
    assert "page 2 of 3" in preview.header.text()


def test_pdf_opens_at_the_page_and_copies_an_obsidian_page_link(qtbot: Any, window: MainWindow, recorder: Recorder) -> None:
    search_and_wait(qtbot, window, "bitterns")
    hit = window.controller.selected
    assert hit is not None
    menu = hit_menu(window.controller, hit, window)
    action = next(a for a in menu.actions() if a.text().startswith("Open PDF"))
    assert action.text() == "Open PDF at page 2"
    action.trigger()
    url = QUrl(recorder.urls[-1])
    assert url.isLocalFile() and url.toLocalFile().endswith("docs/guide.pdf") and url.fragment() == "page=2"
    assert wikilink(hit) == "[[guide.pdf#page=2]]"


def test_index_health_lists_the_skipped_pdf_and_counts_attachments(window: MainWindow) -> None:
    snaps = window.controller.snapshot
    rows = {r.rel_path: r for r in health_rows(snaps)}
    skipped = {path: row.reason for path, row in rows.items() if row.state == "skipped"}
    assert skipped == {"docs/locked.pdf": "encrypted", "docs/scan.pdf": "no_text", "docs/broken.pdf": "malformed"}
    assert "password" in rows["docs/locked.pdf"].detail and "OCR" in rows["docs/scan.pdf"].detail
    assert rows["docs/guide.pdf"].state == "indexed"
    assert describe_status(snaps[0])[1].startswith("marsh: 1 note and 2 attachments")


def test_text_file_previews_as_plain_text_with_the_chunk_marked(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, "plumber")
    hit = window.controller.selected
    assert hit is not None and hit.chunk.rel_path == "docs/todo.txt" and hit.page is None
    preview = window.preview
    qtbot.waitUntil(lambda: preview.chunk_range is not None)
    text = preview.browser.document().toPlainText()
    assert text.startswith("# not a heading")  # shown as written, not rendered as markdown
    start, end = preview.chunk_range
    assert "Call the plumber" in text[start:end]


def test_file_counts_read_as_words() -> None:
    from desktop.state import files_text

    assert files_text(0, 7) == "7 attachments"  # never "0 notes + 7 attachments"
    assert files_text(36, 1) == "36 notes and 1 attachment"
    assert files_text(1, 0) == "1 note"
    assert files_text(0, 0) == "no notes"
