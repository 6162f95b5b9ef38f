"""The Ask pane has room: the answer gets most of the height, the pane widens or pops out,
an abstention's closest notes open, and the header names the scope the answer was given for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QUrl

from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.panels.answer_view import CLOSEST_SCHEME
from tests.desktop.helpers import index_vault
from tests.desktop.test_ask import RELEASE_QUESTION, ask_and_wait

# (window size, the least the answer box must measure) — before this change 1280×800 gave ~270×170.
SIZES = [((1280, 800), (500, 300)), ((1024, 640), (380, 150))]


@pytest.fixture
def window(qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path) -> MainWindow:
    controller = make_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, sample_vault)
    win.tabs.setCurrentWidget(win.ask)
    return win


@pytest.mark.parametrize(("size", "least"), SIZES)
def test_the_answer_box_gets_most_of_the_pane_after_two_questions(
    qtbot: Any, window: MainWindow, size: tuple[int, int], least: tuple[int, int]
) -> None:
    window.resize(*size)
    ask_and_wait(qtbot, window.ask, RELEASE_QUESTION)
    ask_and_wait(qtbot, window.ask, "Who owns it?")
    panel = window.ask
    qtbot.waitUntil(lambda: panel.history.isVisible())
    box = panel.browser.size()
    print(f"window {window.width()}x{window.height()}: answer box {box.width()}x{box.height()} px")  # the figures in the report
    assert box.width() >= least[0] and box.height() >= least[1], (box.width(), box.height())
    parts = panel.splitter.sizes()
    assert parts[1] > 1.1 * (parts[0] + parts[2])  # most of the splitter is the answer, not the list or the sources
    window.ask_room.toggle_wide()
    wide = panel.browser.size()
    assert wide.width() > box.width() * 1.25  # "Wider" gives it most of the window's width
    window.ask_room.toggle_wide()
    assert panel.browser.width() == box.width()


def test_pop_out_moves_the_pane_to_its_own_window_and_closing_puts_it_back(qtbot: Any, window: MainWindow) -> None:
    room = window.ask_room
    room.detach()
    assert room.window is not None and window.tabs.indexOf(window.ask) == -1
    qtbot.waitExposed(room.window)
    assert window.ask.window() is room.window
    ask_and_wait(qtbot, window.ask, RELEASE_QUESTION)  # the pane works from its window
    assert window.ask.browser.width() > 600
    room.window.close()
    assert room.window is None and window.tabs.indexOf(window.ask) >= 0 and window.ask.window() is window


def test_closest_notes_of_an_abstention_open_in_the_preview(qtbot: Any, window: MainWindow) -> None:
    panel = window.ask
    ask_and_wait(qtbot, panel, "How many moons does the marathon have?")
    assert panel.response is not None and panel.response.abstained and panel.response.related
    first = panel.response.related[0]
    assert f"{CLOSEST_SCHEME}:0" in panel.browser.toHtml()
    panel.browser.anchorClicked.emit(QUrl(f"{CLOSEST_SCHEME}:0"))  # what a click on the link sends
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is window.preview)
    assert first.rel_path in window.preview.header.text()


def test_the_header_keeps_the_scope_the_answer_was_given_for(qtbot: Any, window: MainWindow, sample_vault: Path) -> None:
    panel = window.ask
    assert panel.scope_label.text() == "In: all vaults"
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    window.tree.select(sample_vault.name, "Recipes")  # the scope changes after the answer
    assert panel.scope_label.text() == f"Answer from: all vaults · next question in: {sample_vault.name}/Recipes"
    ask_and_wait(qtbot, panel, "How long does the dough rest?")
    assert panel.scope_label.text() == f"In: {sample_vault.name}/Recipes"
    panel.history.setCurrentRow(0)  # back to the first answer: its own scope again
    assert panel.scope_label.text().startswith("Answer from: all vaults")



def test_an_answer_with_sources_does_not_widen_the_pane_over_the_results(qtbot: Any, window: MainWindow, sample_vault: Path) -> None:
    window.resize(1024, 640)
    before = window.tabs.minimumSizeHint().width()
    ask_and_wait(qtbot, window.ask, RELEASE_QUESTION)
    qtbot.waitUntil(lambda: bool(window.ask.sources.lines()))
    window.tree.select(sample_vault.name, "Projects")  # a long "Answer from … · next question in …" header
    assert "next question in" in window.ask.scope_label.text()
    qtbot.wait(50)  # the layouts take the new text in
    assert window.ask.minimumSizeHint().width() <= before
    assert window.results.width() > 200  # the results column keeps room to be read
