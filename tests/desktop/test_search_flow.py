"""Searching the sample vault from the main window, keyword only (fast)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView

from core.base.models import SearchFilters
from core.search.search import SearchRequest
from desktop.controller import AppController, Scope
from desktop.formatting import score_text
from desktop.main_window import MainWindow
from tests.desktop.helpers import Recorder, index_vault, search_and_wait


@pytest.fixture
def window(qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path) -> MainWindow:
    controller = make_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, sample_vault)
    return win


def _core_response(controller: AppController, query: str, filters: SearchFilters = SearchFilters()) -> Any:
    cfg = controller.engine.config
    return controller.engine.search(
        SearchRequest(query, "hybrid", controller.settings.results_k, filters, cfg.profile, cfg.per_note_cap, cfg.top_n, cfg.rrf_k)
    )


def test_typing_a_query_shows_results_and_why_matches_the_core(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, "sourdough rest")
    controller = window.controller
    assert window.results.model.rowCount() > 3
    window.results.view.setFocus()
    qtbot.keyClick(window.results.view, Qt.Key.Key_Down)  # keyboard navigation selects the second hit
    qtbot.waitUntil(lambda: controller.selected is window.results.model.hit(1))
    window.tabs.setCurrentWidget(window.why)
    core = _core_response(controller, "sourdough rest")
    expected = core.hits[1]
    shown = window.why.hit
    assert shown is not None and shown.chunk == expected.chunk
    assert window.why.term_values() == [(t.name, t.value) for t in expected.contributions] + [("= score", expected.score)]
    assert window.why.terms.item(window.why.terms.rowCount() - 1, 1).text() == score_text(expected.score)
    assert f"rank {expected.bm25.rank} of" in window.why.bm25.text()
    assert f"score {expected.bm25.score:.3f}" in window.why.bm25.text()
    assert "keyword mode" in window.why.vector.text()  # semantic is off in this controller
    assert "one list, in its own order" in window.why.mode.text()  # no fusion without the meaning list


def test_preview_highlights_the_chunk_and_scrolls_to_it(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, '"stretch and folds"')
    hit = window.controller.selected
    assert hit is not None and "Bulk fermentation" in hit.chunk.heading_path
    preview = window.preview
    assert preview.chunk_range is not None
    start, end = preview.chunk_range
    chunk_text = preview.browser.document().toPlainText()[start:end]
    assert "stretch and folds" in chunk_text and "Autolyse" not in chunk_text and "Shaping" not in chunk_text
    qtbot.waitUntil(lambda: preview.browser.verticalScrollBar().value() > 0)
    assert "CAIRNCHUNK" not in preview.browser.document().toPlainText()
    assert "recipe" in preview.properties.text()  # front matter shown as properties


def test_selecting_a_folder_scopes_the_search(qtbot: Any, window: MainWindow, sample_vault: Path) -> None:
    search_and_wait(qtbot, window, "rest")
    assert {h.chunk.rel_path.split("/")[0] for h in window.controller.response.hits} - {"Recipes"}
    window.tree.select(sample_vault.name, "Recipes")
    controller = window.controller
    assert controller.scope == Scope(sample_vault.name, "Recipes")
    qtbot.waitUntil(lambda: controller.response is not None and controller.response.parsed.filters.folders == ("Recipes",))
    paths = [h.chunk.rel_path for h in controller.response.hits]
    assert paths and all(p.startswith("Recipes/") for p in paths)
    core = _core_response(controller, "rest", SearchFilters(vaults=(sample_vault.name,), folders=("Recipes",)))
    assert [h.chunk for h in controller.response.hits] == [h.chunk for h in core.hits]
    assert "folder: Recipes" in window.why.filters.text()
    window.search_bar.scope_clear.click()
    qtbot.waitUntil(lambda: controller.response is not None and not controller.response.parsed.filters.folders)


def test_tree_counts_notes_per_folder(window: MainWindow, sample_vault: Path) -> None:
    model = window.tree.model
    top = model.item(0)
    assert top.text() == f"{sample_vault.name}  (36)"
    recipes = model.itemFromIndex(model.find(sample_vault.name, "Recipes"))
    assert recipes.text() == "Recipes  (4)"


def test_stale_results_never_replace_newer_ones(qtbot: Any, window: MainWindow) -> None:
    controller = window.controller
    shown: list[str] = []
    controller.resultsReady.connect(lambda r: shown.append(r.query))
    old = _core_response(controller, "dal")
    first = controller.search("dal", "keyword")
    second = controller.search("pancakes", "keyword")
    qtbot.waitUntil(lambda: controller.response is not None and controller.response.query == "pancakes")
    controller.queries._on_search_done(first, old)  # an older query answering late, as a slow search would
    assert controller.response.query == "pancakes"
    assert shown[-1] == "pancakes" and second > first
    assert controller.stale_dropped >= 1


def test_a_rerun_keeps_the_results_scrolled_and_the_hit_selected_while_a_new_query_starts_at_the_top(
    qtbot: Any, window: MainWindow
) -> None:
    controller, view = window.controller, window.results.view
    window.resize(1000, 500)  # above the window's minimum height (300 was under it, so the height moved with the tabs' content)
    search_and_wait(qtbot, window, "rest")
    rows = window.results.model.rowCount()
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    assert rows > 4  # one row per note
    view.setCurrentIndex(window.results.model.index(4))  # the reader went down the list
    view.scrollTo(window.results.model.index(4), QAbstractItemView.ScrollHint.PositionAtTop)
    last = controller.selected
    scrolled = bar.value()
    assert last is not None and scrolled > 0
    shown = controller.response
    controller.rerun_search()  # what a snapshot or live edit does
    qtbot.waitUntil(lambda: controller.response is not shown)
    assert controller.selected is not None and controller.selected.chunk == last.chunk
    assert bar.value() == scrolled
    search_and_wait(qtbot, window, "dough")
    assert bar.value() == 0 and window.results.view.currentIndex().row() == 0


def test_fast_typing_ends_on_the_last_query(qtbot: Any, window: MainWindow) -> None:
    controller = window.controller
    for text in ("s", "so", "sou", "sour", "sourdough"):
        controller.search(text, "keyword")
    qtbot.waitUntil(lambda: controller.response is not None and controller.response.query == "sourdough")
    qtbot.wait(100)
    assert controller.response.query == "sourdough"


def test_escape_clears_and_ctrl_k_focuses_the_query(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, "dal")
    window.results.view.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(window.search_bar.query.hasFocus)
    qtbot.keyClick(window.search_bar.query, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.results.model.rowCount() == 0)
    assert window.search_bar.query.text() == ""
    qtbot.keyClick(window.search_bar.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.ask


def test_hit_actions_open_copy_and_obsidian(
    qtbot: Any,
    tmp_path: Path,
    make_controller: Callable[..., AppController],
    make_window: Callable[..., MainWindow],
    recorder: Recorder,
) -> None:
    vault = tmp_path / "My Vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Ideas.md").write_text("# Ideas\n\n## Garden\n\nPlant garlic in October.\n", encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    index_vault(qtbot, controller, vault)
    search_and_wait(qtbot, window, "garlic")
    hit = controller.selected
    from desktop.panels.hit_menu import hit_menu

    menu = hit_menu(controller, hit, window)
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert actions["Open in Obsidian"].isEnabled()
    for name in ("Open in editor", "Open in Obsidian", "Copy [[wikilink]]", "Copy path"):
        actions[name].trigger()
    assert recorder.urls[0].startswith("file://") and recorder.urls[0].endswith("/My%20Vault/Ideas.md")
    assert recorder.urls[1] == "obsidian://open?vault=My%20Vault&file=Ideas%23Garden"  # at the hit's heading
    assert recorder.clipboard == ["[[Ideas#Garden]]", str(vault / "Ideas.md")]


def test_filter_controls_reach_the_engine(qtbot: Any, window: MainWindow) -> None:
    bar = window.search_bar
    bar.tags.setText("recipe")
    search_and_wait(qtbot, window, "soup")
    assert window.controller.response.parsed.filters.tags == ("recipe",)
    assert all("recipe" in h.tags for h in window.controller.response.hits)


def test_one_row_per_note_and_its_further_passages_expand_beneath_it(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, "sourdough")
    model = window.results.model
    rows = [model.hit(r) for r in range(model.rowCount())]
    paths = [h.chunk.rel_path for h in rows if h is not None]
    assert len(paths) == len(set(paths))  # one row per note by default
    row = next((r for r, h in enumerate(rows) if h is not None and h.more), None)
    assert row is not None, "the sample vault's sourdough note has several matching passages"
    folded = model.hit(row).more
    assert "more passage" in model.index(row).data(Qt.ItemDataRole.AccessibleTextRole)
    window.results.view.setFocus()
    window.results.view.setCurrentIndex(model.index(row))
    qtbot.keyClick(window.results.view, Qt.Key.Key_Right)
    assert model.rowCount() == len(rows) + len(folded)
    assert model.is_passage(row + 1) and model.hit(row + 1) is folded[0]
    assert model.hit(row + 1).chunk.rel_path == model.hit(row).chunk.rel_path
    qtbot.keyClick(window.results.view, Qt.Key.Key_Left)
    assert model.rowCount() == len(rows)


def test_the_header_says_when_no_note_holds_the_query_words(qtbot: Any, window: MainWindow) -> None:
    search_and_wait(qtbot, window, "sourdough")
    assert window.controller.response.exact_matches
    assert not window.results.summary.text().startswith("No exact matches")
    search_and_wait(qtbot, window, "zqxjkv")  # in no note: keyword-only finds nothing at all here
    assert window.results.summary.text().startswith("No notes match") or window.results.summary.text().startswith("No exact matches")


def test_a_typed_folder_narrows_within_the_tree_scope_and_never_leaves_it(qtbot: Any, window: MainWindow, sample_vault: Path) -> None:
    controller = window.controller
    window.tree.select(sample_vault.name, "Projects")
    search_and_wait(qtbot, window, "cairn folder:Projects/Cairn/Bugs")
    assert controller.response is not None
    paths = [h.chunk.rel_path for h in controller.response.hits]
    assert paths and all(p.startswith("Projects/Cairn/Bugs/") for p in paths)
    search_and_wait(qtbot, window, "cairn folder:Journal")  # outside the scope: nothing, and the header says why
    assert controller.response is not None and controller.response.hits == ()
    assert window.results.summary.text() == "folder:Journal is outside the scope Projects: no notes match."
