"""Links in the Preview: wikilinks and note links navigate, embeds render, Back/Forward walk the
history, backlinks and related notes sit under the note, and "Open in editor" goes to the line."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl

from core.watcher import LiveUpdate
from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.panels.hit_menu import hit_menu
from desktop.panels.preview import PreviewPanel
from tests.desktop.helpers import Recorder, index_vault

REPO = Path(__file__).resolve().parents[2]
LINK_VAULT = REPO / "tests" / "fixtures" / "link_vault"
V = "link_vault"


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]) -> MainWindow:
    vault = tmp_path / V
    shutil.copytree(LINK_VAULT, vault)
    controller = make_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, vault)
    return win


def shown(preview: PreviewPanel) -> tuple[str, str]:
    assert preview._hit is not None
    return preview._hit.chunk.rel_path, preview._hit.chunk.heading_path


def marked_text(preview: PreviewPanel) -> str:
    assert preview.chunk_range is not None
    start, end = preview.chunk_range
    return preview.browser.document().toPlainText()[start:end]


def test_wikilinks_render_as_links_and_code_stays_code(window: MainWindow) -> None:
    preview = window.preview
    assert preview.open_note(V, "Home.md")
    html = preview.browser.document().toHtml()
    assert 'href="cairn-note:Plan"' in html and 'href="cairn-note:Recipes#Soup"' in html
    text = preview.browser.document().toPlainText()
    assert "the plan" in text and "[[Plan|the plan]]" not in text
    assert "[[Not a link]]" in text and "[[Fenced link]]" in text and "[[Indented code link]]" in text  # code as written
    assert "^stock" not in text.split("↪ Recipes")[1]  # block ids are hidden, as Obsidian does
    assert "↪ Recipes" in text and "Onion soup with a dark stock." in text  # a collapsed excerpt of the embed
    assert "cat.png" in html and "<img" in html  # the image embed is an image
    doc = preview.browser.document()
    dead = doc.find("Missing note")
    live = doc.find("dendron.sub.topic")
    assert dead.charFormat().toolTip() == "No note named “Missing note” yet"  # and drawn dimmer
    assert dead.charFormat().foreground().color() != live.charFormat().foreground().color()


def test_clicking_links_opens_notes_at_the_heading_and_block_and_back_forward_walk_them(qtbot: Any, window: MainWindow) -> None:
    preview = window.preview
    preview.open_note(V, "Home.md")
    preview.follow_link(QUrl("cairn-note:Recipes#Soup"))
    assert shown(preview) == ("Recipes.md", "Recipes > Soup")
    assert "Onion soup" in marked_text(preview)
    preview.follow_link(QUrl("cairn-note:Recipes#^stock"))
    assert "Simmer the stock" in marked_text(preview)  # the block's chunk: the same place, no new history step
    preview.follow_link(QUrl("cairn-note:dendron.sub.topic"))
    assert shown(preview)[0] == "dendron.sub.topic.md"
    preview.back()
    assert "Onion soup" in marked_text(preview)
    qtbot.keyClick(preview.browser, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert shown(preview)[0] == "Home.md"
    assert not preview.back_button.isEnabled() and preview.forward_button.isEnabled()
    qtbot.keyClick(preview.browser, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert shown(preview)[0] == "Recipes.md"


def test_markdown_links_resolve_relative_to_the_note_and_dead_links_say_so(window: MainWindow) -> None:
    preview = window.preview
    messages: list[str] = []
    window.controller.message.connect(messages.append)
    preview.open_note(V, "Home.md")
    preview.follow_link(QUrl("Projects/My%20Notes.md#Goals"))
    assert shown(preview) == ("Projects/My Notes.md", "My Notes > Goals")
    preview.follow_link(QUrl("../Home.md"))
    assert shown(preview)[0] == "Home.md" and messages == []
    preview.follow_link(QUrl("../Home.md"))  # outside the vault from here: said, not guessed
    assert shown(preview)[0] == "Home.md" and "../Home.md" in messages[-1]
    preview.follow_link(QUrl("cairn-note:Missing%20note"))
    assert shown(preview)[0] == "Home.md"
    assert "Missing note" in messages[-1]


def test_web_links_open_in_the_browser_only_when_the_user_agrees(window: MainWindow, recorder: Recorder) -> None:
    preview = window.preview
    preview.open_note(V, "Home.md")
    asked: list[str] = []
    preview.confirm_external = lambda address: asked.append(address) or False
    preview.follow_link(QUrl("https://obsidian.md"))
    assert asked == ["https://obsidian.md"] and recorder.urls == []
    preview.confirm_external = lambda address: True
    preview.follow_link(QUrl("https://obsidian.md"))
    assert recorder.urls == ["https://obsidian.md"]


def test_backlinks_and_related_notes_under_the_preview_open_their_note_at_the_line(qtbot: Any, window: MainWindow) -> None:
    preview = window.preview
    with qtbot.waitSignal(preview.links.loaded, timeout=10000):
        preview.open_note(V, "Recipes.md")
    tree = preview.links.tree
    groups = {tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())}
    assert set(groups) == {"Backlinks (4)", "Unlinked mentions (3)", "Related notes (7)"}
    backlinks = groups["Backlinks (4)"]
    texts = [backlinks.child(i).text(0) for i in range(backlinks.childCount())]
    assert "Home — Soup is in Recipes > Soup; the stock is at Recipes > stock." in texts  # labels, as the note reads (no ^ marker)
    related = groups["Related notes (7)"]
    assert any("links here" in related.child(i).text(0) for i in range(related.childCount()))
    item = next(backlinks.child(i) for i in range(backlinks.childCount()) if "Shouting" in backlinks.child(i).text(0))
    preview.links._activate(item)
    assert shown(preview)[0] == "Home.md"
    assert "Shouting works too" in marked_text(preview)


def test_open_in_editor_goes_to_the_hits_line_and_a_failure_is_shown(window: MainWindow, recorder: Recorder) -> None:
    controller = window.controller
    controller.settings = replace(controller.settings, editor_command="code --goto {path}:{line}")
    preview = window.preview
    preview.open_note(V, "Recipes.md", "^stock")
    assert preview._hit is not None
    messages: list[str] = []
    controller.message.connect(messages.append)
    actions = {a.text(): a for a in hit_menu(controller, preview._hit, preview).actions() if a.text()}
    path = Path(controller.engine.config.vault_named(V).root) / "Recipes.md"
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("## Soup"))
    actions[f"Open in editor at line {line}"].trigger()
    assert recorder.started == [["code", "--goto", f"{path}:{line}"]] and messages == []
    recorder.start_ok = False
    actions[f"Open in editor at line {line}"].trigger()
    assert messages and "Could not start the editor 'code'" in messages[-1]


def test_links_in_an_answer_open_the_note_in_the_preview_tab(window: MainWindow, recorder: Recorder) -> None:
    window.tabs.setCurrentWidget(window.ask)
    browser = window.ask.browser
    browser.set_answer("The stock simmers for hours, see [[Recipes#Soup|the soup]] [1] and [Obsidian](https://obsidian.md).")
    html = browser.document().toHtml()
    assert 'href="cairn-note:Recipes#Soup"' in html and "[[" not in browser.document().toPlainText()
    browser.anchorClicked.emit(QUrl("cairn-note:Recipes#Soup"))
    assert window.tabs.currentWidget() is window.preview
    assert shown(window.preview) == ("Recipes.md", "Recipes > Soup")
    window.preview.confirm_external = lambda address: True
    browser.anchorClicked.emit(QUrl("https://obsidian.md"))
    assert recorder.urls == ["https://obsidian.md"]


def test_a_new_backlink_written_on_disk_shows_after_the_live_update(qtbot: Any, window: MainWindow) -> None:
    preview = window.preview
    with qtbot.waitSignal(preview.links.loaded, timeout=10000):
        preview.open_note(V, "Recipes.md")
    root = Path(window.controller.engine.config.vault_named(V).root)
    (root / "Journal" / "2024-01-03.md").write_text("# Wednesday\n\nMade the soup from [[Recipes]] again.\n")
    with qtbot.waitSignal(preview.links.loaded, timeout=10000):
        report = window.controller.engine.update_notes(V, ["Journal/2024-01-03.md"])  # what the watcher does
        window.controller.liveUpdated.emit(LiveUpdate(V, ("Journal/2024-01-03.md",), False, report, 1.0, 1.0))
    assert "Journal/2024-01-03.md" in {b.rel_path for b in preview.links.result.backlinks}


def test_related_notes_sharing_a_title_are_told_apart_by_their_folder(
    qtbot: Any, tmp_path: Path, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    vault = tmp_path / "pages"
    for folder in ("pages.de/common", "pages/common"):
        (vault / folder).mkdir(parents=True)
        (vault / folder / "tar.md").write_text("# tar\n\nExtract a tar archive; create a tar archive of files.\n", encoding="utf-8")
    (vault / "Archives.md").write_text("# Archives\n\nHow to extract a tar archive and create one from files.\n", encoding="utf-8")
    controller = make_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, vault)
    with qtbot.waitSignal(win.preview.links.loaded, timeout=10000):
        win.preview.open_note("pages", "Archives.md")
    tree = win.preview.links.tree
    related = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount()) if tree.topLevelItem(i).text(0).startswith("Related"))
    names = sorted(related.child(i).text(0).split(" — ")[0] for i in range(related.childCount()))
    assert names == ["tar (pages.de/common)", "tar (pages/common)"]
