"""Errors a user can see: failed opens are said in the window; unexpected errors are logged with a traceback."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.base.paths import AppPaths
from desktop.actions import HitActions
from desktop.controller import AppController
from desktop.error_log import ErrorLog
from desktop.main_window import MainWindow
from tests.desktop.helpers import index_vault


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "Kept.md").write_text("# Kept\n\nA note.\n", encoding="utf-8")
    return root


@pytest.fixture
def error_log(make_controller: Callable[..., AppController]) -> Iterator[Callable[[AppController], ErrorLog]]:
    made: list[ErrorLog] = []

    def install(controller: AppController) -> ErrorLog:
        log = ErrorLog(AppPaths.from_env(), controller.message.emit)
        made.append(log)
        return log

    yield install
    for log in made:
        log.close()


def test_an_open_the_system_refuses_is_shown_with_what_was_tried(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], notes: Path
) -> None:
    controller = make_controller(actions=HitActions(open_url=lambda url: False, set_clipboard=lambda t: None))
    window = make_window(controller)
    assert controller.actions.open_in_editor(str(notes), "Kept.md") is False
    tip = window.status.note.toolTip()
    assert str(notes / "Kept.md") in tip and "default application" in tip and "no application" in tip


def test_opening_a_note_deleted_since_indexing_says_so(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], notes: Path
) -> None:
    opened: list[object] = []
    controller = make_controller(actions=HitActions(open_url=opened.append, set_clipboard=lambda t: None))
    window = make_window(controller)
    assert controller.actions.open_in_editor(str(notes), "Gone.md") is False
    assert opened == []  # the platform opener is not even tried on a missing file
    assert "Gone.md" in window.status.note.toolTip() and "no longer exists" in window.status.note.toolTip()
    assert controller.actions.reveal(str(notes), "Kept.md") is True


def test_an_uncaught_exception_in_a_thread_is_logged_with_its_traceback_and_shown(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], error_log: Any
) -> None:
    controller = make_controller()
    window = make_window(controller)
    log = error_log(controller)

    def boom() -> None:
        raise ValueError("a bug in a worker")

    t = threading.Thread(target=boom, name="some-worker")
    t.start()
    t.join()
    qtbot.waitUntil(lambda: "Unexpected error: ValueError: a bug in a worker" in window.status.note.toolTip(), timeout=3000)
    assert str(log.path) in window.status.note.toolTip()
    text = log.path.read_text(encoding="utf-8")
    assert "Uncaught exception in some-worker" in text and "Traceback" in text and 'raise ValueError("a bug in a worker")' in text


def test_an_unexpected_indexing_error_is_logged_with_its_traceback(
    qtbot: Any, make_controller: Callable[..., AppController], error_log: Any, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = make_controller()
    log = error_log(controller)
    failed: list[str] = []
    controller.indexFailed.connect(failed.append)

    def broken_sync(*args: object, **kwargs: object) -> list[object]:
        raise RuntimeError("disk gremlin")

    monkeypatch.setattr(controller.engine, "sync", broken_sync)
    index_vault(qtbot, controller, notes)
    assert failed == ["Indexing notes failed: RuntimeError: disk gremlin"]
    text = log.path.read_text(encoding="utf-8")
    assert "Unexpected error in a worker" in text and "in broken_sync" in text
    assert log.handler.maxBytes <= 1024 * 1024  # rotated, kept small
