"""Plain words where people read: editor failures with a way out, readable elision, dotted names as a tree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import Recorder


def test_an_editor_that_fails_offers_to_choose_one_and_opens_the_note_with_it(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], recorder: Recorder, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "Plan.md").write_text("# Plan\n\nline two\n", encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    recorder.start_ok = False  # the configured editor does not start
    assert controller.actions.open_in_editor(str(notes), "Plan.md", 2, "nosuch-editor {path}") is False
    box = window.editor_choice.box
    assert box is not None and box.isVisible() and "Could not start the editor 'nosuch-editor'" in box.text()
    assert "nosuch-editor" in window.status.note.toolTip()  # said in the status line too
    recorder.start_ok = True
    window.editor_choice.choose = lambda: "/opt/My Editor/bin/edit"  # what the file dialog returns
    window.editor_choice.choose_button.click()
    assert controller.settings.editor_command == '"/opt/My Editor/bin/edit" {path}'
    assert controller.store.load().editor_command == controller.settings.editor_command  # kept in Settings
    assert recorder.started[-1] == ["/opt/My Editor/bin/edit", str(notes / "Plan.md")]


def test_no_application_for_the_note_is_a_failure_with_the_same_way_out(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    from desktop.actions import HitActions

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "Plan.md").write_text("# Plan\n", encoding="utf-8")
    controller = make_controller(actions=HitActions(open_url=lambda url: False, set_clipboard=lambda t: None, start_detached=lambda argv: True))
    window = make_window(controller)
    assert controller.actions.open_in_editor(str(notes), "Plan.md") is False  # no editor command: the system's default
    box = window.editor_choice.box
    assert box is not None and "no application" in box.text()
    window.editor_choice.choose = lambda: ""  # the dialog was cancelled: nothing changes
    window.editor_choice.choose_button.click()
    assert controller.settings.editor_command == ""
