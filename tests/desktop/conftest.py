"""Fixtures for the desktop tests: private settings files, controllers that always shut down, fake embedders.

Every test here fails on a Qt warning the app produces (pytest-qt's
`qt_log_level_fail`), except the offscreen platform's own size-hint notice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.base.paths import AppPaths
from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.settings import SettingsStore
from tests.desktop.helpers import Recorder

HERE = Path(__file__).resolve().parent
QT_NOISE = r"This plugin does not support propagateSizeHints\(\)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            item.add_marker(pytest.mark.qt_log_ignore(QT_NOISE))


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    return tmp_path / "settings" / "desktop.ini"


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_controller(settings_file: Path, recorder: Recorder) -> Iterator[Callable[..., AppController]]:
    """Builds controllers on the test's CAIRN_HOME; each is shut down (threads joined) after the test."""
    made: list[AppController] = []

    def make(**kwargs: Any) -> AppController:
        kwargs.setdefault("embedder_factory", None)
        kwargs.setdefault("actions", recorder.actions())
        controller = AppController(AppPaths.from_env(), SettingsStore.at(settings_file), **kwargs)
        made.append(controller)
        return controller

    yield make
    for controller in made:
        controller.shutdown()


@pytest.fixture
def make_window(qtbot: Any, sample_vault: Path) -> Callable[[AppController], MainWindow]:
    def make(controller: AppController) -> MainWindow:
        window = MainWindow(controller, sample_vault)
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        qtbot.waitExposed(window)
        return window

    return make
