"""The app's structured views on tests/fixtures/structured_vault: the property facet, a Base in
the tree scoping the search, the Tasks view and the Check-up dialog (real widgets, offscreen)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.controller import AppController, Scope
from desktop.dialogs.checkup_dialog import CheckupDialog
from desktop.dialogs.tasks_dialog import TasksDialog
from desktop.main_window import MainWindow
from desktop.panels.base_items import BaseRole, find_base_item
from tests.desktop.helpers import Recorder, index_vault

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "structured_vault"


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]) -> MainWindow:
    root = tmp_path / "structured"
    shutil.copytree(FIXTURE, root)
    controller = make_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, root, timeout_ms=30000)
    return win


def test_the_property_facet_lists_keys_and_values_and_adds_the_filter(qtbot: Any, window: MainWindow) -> None:
    facet = window.search_bar.properties
    facet.rebuild()
    keys = {a.text().split("  (")[0]: a.menu() for a in facet.menu().actions() if a.menu() is not None}
    assert keys["status"] is not None and "rating" in keys
    values = [a.text() for a in keys["status"].actions()]
    assert values[0] == "has status  (4)" and "draft  (2)" in values
    pick = next(a for a in keys["status"].actions() if a.text().startswith("active"))
    pick.trigger()
    qtbot.waitUntil(lambda: window.controller.response is not None and window.controller.response.query == "status:active")
    assert {h.chunk.rel_path for h in window.controller.response.hits} == {"Projects/Launch.md"}


def test_a_base_in_the_tree_scopes_the_search_and_lists_its_rows_in_order(qtbot: Any, window: MainWindow) -> None:
    tree = window.tree
    index = find_base_item(tree.model, "structured", "Projects.base")
    assert index.isValid() and index.data(BaseRole) == "Projects.base"
    tree.view.setCurrentIndex(index)
    assert window.controller.scope == Scope("structured", "", "Projects.base")
    qtbot.waitUntil(lambda: window.controller.response is not None and window.controller.response.query == "")
    assert [h.chunk.rel_path for h in window.controller.response.hits] == ["Projects/Launch.md", "Projects/Pricing.md", "Projects/Odd.md"]
    window.search_bar.query.setText("website")
    window.search_bar.search_now()
    qtbot.waitUntil(lambda: window.controller.response is not None and window.controller.response.query == "website")
    assert "Projects/Website.md" not in {h.chunk.rel_path for h in window.controller.response.hits}  # not a row of the Base


def test_the_tasks_view_filters_and_opens_the_note_at_the_line(qtbot: Any, window: MainWindow, recorder: Recorder) -> None:
    dialog = TasksDialog(window.controller, window)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == 6  # open (and in-progress) tasks of the fixture vault
    dialog.query.setText("due<2026-11-30")
    dialog.refresh()
    assert [h.task.text for h in dialog.hits] == ["Draft the pricing page", "Send Ann the pricing draft"]
    assert dialog.table.item(0, 2).text() == "2026-11-25"
    dialog.open_row(0)
    assert recorder.urls and recorder.urls[-1].endswith("Projects/Pricing.md")


def test_the_checkup_dialog_lists_findings_and_opens_them(qtbot: Any, window: MainWindow, recorder: Recorder) -> None:
    dialog = CheckupDialog(window.controller, "structured", window)
    qtbot.addWidget(dialog)
    dialog.wait()
    qtbot.waitUntil(lambda: dialog.checkup is not None, timeout=10000)
    groups = [dialog.tree.topLevelItem(i).text(0) for i in range(dialog.tree.topLevelItemCount())]
    assert groups[0].startswith("Broken links (") and any(g.startswith("Orphan notes (") for g in groups)
    broken = dialog.tree.topLevelItem(0)
    first = broken.child(0)
    dialog.open_item(first)
    assert recorder.urls


def test_a_canvas_hit_previews_its_cards(qtbot: Any, window: MainWindow) -> None:
    from tests.desktop.helpers import search_and_wait

    search_and_wait(qtbot, window, "kayak rental")
    hit = window.controller.response.hits[0]
    assert hit.chunk.rel_path == "Board.canvas"
    window.controller.select_hit(hit)
    qtbot.waitUntil(lambda: "Kayak rental partnership" in window.preview.browser.toPlainText())
    assert '"nodes"' not in window.preview.browser.toPlainText()  # the cards, not the JSON
