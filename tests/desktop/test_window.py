"""The window as a whole: welcome view, the sample vault, layout restored, accessible names."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget

from desktop import app as desktop_app
from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import search_and_wait


def test_without_a_vault_the_welcome_view_offers_folder_and_sample(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> None:
    controller = make_controller()
    window = make_window(controller)
    assert window.stack.currentWidget() is window.welcome
    assert window.welcome.open_button.text() == "Open a folder…"
    assert window.welcome.sample_button.isEnabled()
    with qtbot.waitSignal(controller.indexFinished, timeout=15000):
        window.welcome.sample_button.click()
    assert window.stack.currentWidget() is not window.welcome
    assert [v.root for v in controller.vaults] == [str(sample_vault)]
    qtbot.waitUntil(lambda: window.tree.model.rowCount() == 1)


def _drag(window: MainWindow, *paths: Path | str) -> tuple[bool, bool]:
    """Drag these (local paths, or URL strings) over the window and drop them; (enter accepted, drop accepted)."""
    mime = QMimeData()
    mime.setUrls([QUrl(p) if isinstance(p, str) else QUrl.fromLocalFile(str(p)) for p in paths])
    pos = QPoint(window.width() // 2, window.height() // 2)
    enter = QDragEnterEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    drop = QDropEvent(QPointF(pos), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    return enter.isAccepted(), drop.isAccepted()


def test_a_folder_dropped_on_the_window_becomes_a_vault_and_nothing_else_does(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> None:
    controller = make_controller()
    window = make_window(controller)
    note = sample_vault / "Recipes" / "Sourdough loaf.md"
    assert _drag(window, note, "https://example.com/notes") == (False, False)
    assert not controller.vaults
    assert window.stack.currentWidget() is window.welcome
    with qtbot.waitSignal(controller.indexFinished, timeout=15000):
        assert _drag(window, note, sample_vault) == (True, True)  # the folder among them is taken
    assert [v.root for v in controller.vaults] == [str(sample_vault)]
    assert window.stack.currentWidget() is not window.welcome


def test_sample_vault_is_found_next_to_the_package(sample_vault: Path) -> None:
    assert desktop_app.sample_vault_path() == sample_vault


def test_main_with_sample_if_empty_opens_and_indexes_the_sample(qtbot: Any, settings_file: Path) -> None:
    """`make run`: no vault configured, so the sample is added and indexed in the background."""
    seen: dict[str, Any] = {}

    def poll() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if windows and windows[0].controller.snapshot and not windows[0].controller.is_indexing():
            seen["vaults"] = [v.name for v in windows[0].controller.vaults]
            seen["page"] = windows[0].stack.currentIndex()
            seen["startup_heap_frozen"] = gc.get_freeze_count() > 0  # full GC passes skip it: no stall mid-indexing
            windows[0].close()
            QApplication.exit(0)  # synchronous, unlike quit(), whose posted event would end a later test's wait
            return
        QTimer.singleShot(50, poll)

    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(lambda: QApplication.exit(1))  # never hang the suite
    guard.start(15000)
    QApplication.setQuitOnLastWindowClosed(False)
    QTimer.singleShot(0, poll)
    gc.unfreeze()
    try:
        assert desktop_app.main(["--sample-if-empty", "--no-semantic"]) == 0
    finally:
        guard.stop()
        QApplication.setQuitOnLastWindowClosed(True)
        gc.unfreeze()
    assert seen == {"vaults": ["sample-vault"], "page": 1, "startup_heap_frozen": True}


def test_geometry_splitter_and_last_query_are_restored(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> None:
    first = make_controller()
    window = make_window(first)
    with qtbot.waitSignal(first.indexFinished, timeout=15000):
        first.add_vault(sample_vault)
    search_and_wait(qtbot, window, "pancakes")
    window.resize(720, 520)  # inside the offscreen screen (800 x 600), so no clamping
    window.splitter.setSizes([150, 300, 250])
    sizes = window.splitter.sizes()
    window.close()
    first.shutdown()
    second = make_controller()
    again = MainWindow(second, sample_vault)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.search_bar.query.text() == "pancakes"
    assert (again.width(), again.height()) == (720, 520)
    assert again.splitter.sizes() == sizes


def test_every_input_widget_has_an_accessible_name(make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]) -> None:
    window = make_window(make_controller())
    from PySide6.QtWidgets import (
        QAbstractButton,
        QAbstractItemView,
        QComboBox,
        QDateEdit,
        QHeaderView,
        QLineEdit,
        QTextBrowser,
    )

    kinds = (QLineEdit, QComboBox, QDateEdit, QAbstractItemView, QTextBrowser)
    unnamed = [
        w
        for w in window.findChildren(QWidget)
        if isinstance(w, kinds)
        and not isinstance(w, QHeaderView)
        and w.window() is window  # popups of combos and completers are Qt's own
        and not isinstance(w.parent(), (QComboBox, QDateEdit))
        and not w.accessibleName()
    ]
    unnamed += [b for b in window.findChildren(QAbstractButton) if not b.text() and not b.accessibleName() and b.isVisibleTo(window)]
    assert not unnamed, [type(w).__name__ for w in unnamed]
