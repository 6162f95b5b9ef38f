"""Live indexing in the app: edits on disk reach the results and the tree; closing flushes to disk.

Real watchdog, keyword-only engine, 0.2 s debounce. Every wait is `qtbot.waitUntil`
on state the GUI thread owns: the watcher calls back from its own threads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.watcher import LiveUpdate
from desktop.controller import AppController
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.dialogs.settings_pages import GeneralSettingsPanel
from desktop.live import describe_update
from desktop.main_window import MainWindow
from desktop.settings import Settings, SettingsStore
from tests.desktop.helpers import copy_folders, index_vault, search_and_wait

LIVE_DEBOUNCE_MS = 200
LOAF = "Recipes/Sourdough loaf.md"


@pytest.fixture
def vault(tmp_path: Path, sample_vault: Path) -> Path:
    """Two folders of the sample vault, copied: the tests write to it."""
    return copy_folders(sample_vault, tmp_path / "kitchen", ["Recipes", "How-to"])


@pytest.fixture
def live_controller(settings_file: Path, make_controller: Callable[..., AppController]) -> Callable[..., AppController]:
    def make(**kwargs: Any) -> AppController:
        SettingsStore.at(settings_file).save(Settings(live_debounce_ms=LIVE_DEBOUNCE_MS))
        return make_controller(**kwargs)

    return make


@pytest.fixture
def window(qtbot: Any, live_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], vault: Path) -> Iterator[MainWindow]:
    controller = live_controller()
    win = make_window(controller)
    index_vault(qtbot, controller, vault)
    qtbot.waitUntil(lambda: controller.watched == ("kitchen",) and "kitchen" in controller.live.caught_up, timeout=5000)
    yield win


def _tree_label(window: MainWindow, folder: str = "") -> str:
    model = window.tree.model
    index = model.find("kitchen", folder)
    return str(model.itemFromIndex(index).text()) if index.isValid() else ""


def _manifest(controller: AppController, name: str) -> dict[str, Any]:
    from core.index.manifest import load_manifest

    loaded = load_manifest(controller.paths.vault_dir(name) / "manifest.json")
    assert loaded is not None
    return {"chunking_hash": loaded[0], "files": loaded[1]}


def test_editing_a_note_on_disk_refreshes_the_results_without_user_action(qtbot: Any, window: MainWindow, vault: Path) -> None:
    controller = window.controller
    search_and_wait(qtbot, window, "quokka")
    assert controller.response is not None and not controller.response.hits
    note = vault / LOAF
    note.write_text(note.read_text(encoding="utf-8") + "\n## Crumb\n\nA quokka-shaped crumb means the dough was ready.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: window.results.model.rowCount() > 0, timeout=5000)
    hit = window.results.model.hit(0)
    assert hit is not None and hit.chunk.rel_path == LOAF
    assert controller.selected is not None and controller.selected.chunk.rel_path == LOAF  # the preview follows
    assert controller.response.query == "quokka"
    assert window.status.note.text().startswith(f"Re-indexed {LOAF} (")
    assert controller.engine.is_dirty("kitchen")  # searchable now, written to disk later (or on close)


def test_creating_a_note_updates_the_tree_counts(qtbot: Any, window: MainWindow, vault: Path) -> None:
    assert _tree_label(window, "Recipes") == "Recipes  (4)"
    before = _tree_label(window)
    (vault / "Recipes" / "Plum crumble.md").write_text("# Plum crumble\n\nPlums, butter, oats.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: _tree_label(window, "Recipes") == "Recipes  (5)", timeout=5000)
    assert _tree_label(window) != before
    (vault / "Recipes" / "Weeknight dal.md").unlink()
    qtbot.waitUntil(lambda: _tree_label(window, "Recipes") == "Recipes  (4)", timeout=5000)
    assert "Removed Recipes/Weeknight dal.md from the index" in window.status.note.text()


def test_the_preview_keeps_the_readers_place_when_another_note_changes(qtbot: Any, window: MainWindow, vault: Path) -> None:
    controller, preview = window.controller, window.preview
    search_and_wait(qtbot, window, '"stretch and folds"')
    assert controller.selected is not None and controller.selected.chunk.rel_path == LOAF
    bar = preview.browser.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() > 0)  # scrolled to the chunk
    qtbot.wait(50)  # and the deferred second scroll (after layout) has run too
    bar.setValue(0)  # the reader scrolled back up to the ingredients
    shown = controller.response

    other = vault / "Recipes" / "Weeknight dal.md"
    other.write_text(other.read_text(encoding="utf-8") + "\nServe with rice.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: controller.response is not shown, timeout=5000)  # the search re-ran
    assert controller.selected is not None and controller.selected.chunk.rel_path == LOAF
    qtbot.wait(50)  # a re-render would scroll back to the chunk on the next event-loop pass
    assert bar.value() == 0

    note = vault / LOAF  # the previewed note itself changed: shown afresh, at its chunk again
    note.write_text(note.read_text(encoding="utf-8") + "\nA last fold before shaping.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: "A last fold before shaping." in preview.browser.document().toPlainText(), timeout=5000)
    qtbot.waitUntil(lambda: bar.value() > 0)

    bar.setValue(0)  # a clicked citation of the shown chunk brings the passage back into view
    window.show_in_preview(controller.selected, switch=True)
    qtbot.waitUntil(lambda: bar.value() > 0)


def test_the_tree_keeps_what_the_user_opened_and_collapsed_while_notes_change(qtbot: Any, window: MainWindow, vault: Path) -> None:
    tree, model = window.tree, window.tree.model
    snapshots: list[object] = []
    window.controller.snapshotChanged.connect(snapshots.append)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))

    def expanded(folder: str) -> bool:
        return tree.view.isExpanded(model.find("kitchen", folder))

    assert expanded("") and not expanded("How-to")  # a new vault opens at its top level only
    tree.view.expand(model.find("kitchen", "How-to"))

    note = vault / LOAF  # an edit that changes no count: the tree is left alone
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more fold.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: len(snapshots) >= 1, timeout=5000)
    assert resets == [] and expanded("How-to")

    (vault / "How-to" / "Git" / "Tag a release.md").write_text("# Tag a release\n\ngit tag -s\n", encoding="utf-8")
    qtbot.waitUntil(lambda: _tree_label(window, "How-to/Git") == "Git  (2)", timeout=5000)
    assert resets and expanded("") and expanded("How-to") and not expanded("How-to/Git")

    tree.view.collapse(model.find("kitchen"))  # the user's collapse of the vault itself sticks too
    (vault / "Recipes" / "Plum crumble.md").write_text("# Plum crumble\n\nPlums.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: _tree_label(window, "Recipes") == "Recipes  (5)", timeout=5000)
    assert not expanded("") and expanded("How-to")


def test_closing_the_window_flushes_live_changes_to_disk(qtbot: Any, window: MainWindow, vault: Path) -> None:
    controller = window.controller
    index_dir = controller.paths.vault_dir("kitchen")
    updates: list[LiveUpdate] = []
    controller.liveUpdated.connect(updates.append)
    (vault / "Recipes" / "Plum crumble.md").write_text("# Plum crumble\n\nPlums, butter, oats.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: bool(updates), timeout=5000)
    assert (index_dir / "dirty").exists()
    assert "Recipes/Plum crumble.md" not in _manifest(controller, "kitchen")["files"]
    assert window.close()
    assert not window.isVisible()
    assert controller.closed and controller.watched == ()
    assert not (index_dir / "dirty").exists()
    assert "Recipes/Plum crumble.md" in _manifest(controller, "kitchen")["files"]
    assert window.saving_dialog is None  # a fast flush shows no "Saving index…" note


def test_a_slow_flush_shows_a_saving_note_and_still_completes(
    qtbot: Any, window: MainWindow, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = window.controller
    engine = controller.engine
    real_flush = engine.flush

    def slow_flush(names: Any = None) -> None:
        time.sleep(0.25)
        real_flush(names)

    monkeypatch.setattr(engine, "flush", slow_flush)  # the watcher's flush plus the final one: ~0.5 s
    updates: list[LiveUpdate] = []
    controller.liveUpdated.connect(updates.append)
    (vault / "Recipes" / "Plum crumble.md").write_text("# Plum crumble\n\nPlums.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: bool(updates), timeout=5000)
    assert window.close()
    assert window.saving_dialog is not None and window.saving_dialog.labelText() == "Saving index…"
    assert not window.saving_dialog.isVisible()
    assert not (controller.paths.vault_dir("kitchen") / "dirty").exists()


def test_closing_while_indexing_cancels_first_and_does_not_hang(
    qtbot: Any, live_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> None:
    from tests.desktop.helpers import FakeEmbedder

    controller = live_controller(embedder_factory=lambda vc: FakeEmbedder(delay=0.3))
    window = make_window(controller)
    progress: list[str] = []
    reports: list[Any] = []
    controller.indexProgress.connect(lambda v, d, t, phase: progress.append(phase))
    controller.indexFinished.connect(reports.append)
    controller.add_vault(sample_vault)
    qtbot.waitUntil(lambda: "embedding" in progress, timeout=10000)
    t0 = time.monotonic()
    assert window.close()
    assert time.monotonic() - t0 < 5
    assert reports and reports[0][0].embedding is not None and reports[0][0].embedding.cancelled
    assert not controller.is_indexing() and controller.watched == ()  # cancelled before the watcher ever started
    assert not (controller.paths.vault_dir(sample_vault.name) / "dirty").exists()


def test_closing_with_nothing_indexed_is_quick(
    qtbot: Any, live_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    controller = live_controller()
    window = make_window(controller)
    t0 = time.monotonic()
    assert window.close()
    assert time.monotonic() - t0 < 2 and controller.closed
    controller.shutdown()
    controller.shutdown()  # twice is harmless (the app's exit path and a test fixture both call it)


def test_a_watcher_error_is_shown_and_live_updates_carry_on(
    qtbot: Any, window: MainWindow, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = window.controller
    engine = controller.engine
    real_update = engine.update_notes

    def broken(name: str, rel_paths: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine, "update_notes", broken)
    note = vault / LOAF
    note.write_text(note.read_text(encoding="utf-8") + "\nwombat\n", encoding="utf-8")
    qtbot.waitUntil(lambda: "Live update of kitchen failed" in window.status.note.toolTip(), timeout=5000)
    assert "No space left on device" in window.status.note.toolTip()
    monkeypatch.setattr(engine, "update_notes", real_update)
    search_and_wait(qtbot, window, "wombat")
    note.write_text(note.read_text(encoding="utf-8") + "\nwombat again\n", encoding="utf-8")
    qtbot.waitUntil(lambda: window.results.model.rowCount() > 0, timeout=5000)  # the watcher survived the error
    assert controller.watched == ("kitchen",)


def test_vaults_added_and_removed_restart_the_watcher(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    controller = window.controller
    other = tmp_path / "garden"
    other.mkdir()
    (other / "Beds.md").write_text("# Beds\n\nGarlic in October.\n", encoding="utf-8")
    index_vault(qtbot, controller, other)
    qtbot.waitUntil(lambda: controller.watched == ("kitchen", "garden"), timeout=5000)
    (other / "Beds.md").write_text("# Beds\n\nGarlic in October, broad beans in November.\n", encoding="utf-8")
    search_and_wait(qtbot, window, "broad beans")
    qtbot.waitUntil(lambda: window.results.model.rowCount() > 0, timeout=5000)
    controller.remove_vault("garden")
    qtbot.waitUntil(lambda: controller.watched == ("kitchen",), timeout=5000)


def test_a_new_engine_gets_a_new_watcher_after_the_old_one_flushed(qtbot: Any, window: MainWindow, vault: Path) -> None:
    controller = window.controller
    old = controller.engine
    updates: list[LiveUpdate] = []
    controller.liveUpdated.connect(updates.append)
    (vault / "Recipes" / "Plum crumble.md").write_text("# Plum crumble\n\nPlums.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: bool(updates), timeout=5000)
    assert old.is_dirty("kitchen")
    controller.apply_settings(controller.settings, replace(old.config, rrf_k=30))  # a setting that rebuilds the engine

    def rewatched() -> bool:
        target = controller.live.target
        return controller.engine is not old and target is not None and target[0] is controller.engine and controller.watched == ("kitchen",)

    qtbot.waitUntil(lambda: rewatched() and not controller.is_indexing(), timeout=8000)
    assert not old.is_dirty("kitchen")  # flushed before the new engine indexed
    assert "Recipes/Plum crumble.md" in _manifest(controller, "kitchen")["files"]
    search_and_wait(qtbot, window, "damson")
    (vault / "Recipes" / "Plum crumble.md").write_text("# Plum crumble\n\nPlums or damsons.\n", encoding="utf-8")
    qtbot.waitUntil(lambda: window.results.model.rowCount() > 0, timeout=5000)


def test_debounce_setting_is_saved_and_reaches_the_watcher(qtbot: Any, window: MainWindow, settings_file: Path) -> None:
    controller = window.controller
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(GeneralSettingsPanel)
    assert page.live_debounce.value() == LIVE_DEBOUNCE_MS
    page.live_debounce.setValue(700)
    dialog.accept()
    assert controller.settings.live_debounce_ms == 700
    assert SettingsStore.at(settings_file).load().live_debounce_ms == 700
    watcher = controller.live._worker._watcher
    qtbot.waitUntil(lambda: watcher is not None and watcher.debounce == 0.7, timeout=2000)
    assert Settings().live_debounce_ms == 1000


def test_describe_update_names_the_note_and_the_time() -> None:
    from core.engine import SyncReport
    from core.index.indexer import SyncStats

    def update(paths: tuple[str, ...], removed: tuple[str, ...] = (), reconciled: bool = False) -> LiveUpdate:
        stats = SyncStats("kitchen", 5, 9, 0, len(paths) - len(removed), len(removed), 4, {}, 0, 0.01, removed_paths=removed)
        return LiveUpdate("kitchen", paths, reconciled, SyncReport(stats, None), 35.2, 240.0)

    assert describe_update(update((LOAF,))) == f"Re-indexed {LOAF} (35 ms)"
    assert describe_update(update((LOAF,), removed=(LOAF,))) == f"Removed {LOAF} from the index (35 ms)"
    assert describe_update(update(("a.md", "b.md"))) == "Re-indexed 2 notes in kitchen (35 ms)"
    assert describe_update(replace(update(()), reconciled=True)) == "Re-indexed kitchen after a folder change (35 ms)"


def test_a_vault_is_live_from_the_moment_it_is_added(
    qtbot: Any, live_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], vault: Path
) -> None:
    """An edit made after the first index read the note is searchable soon after indexing (issue 15)."""
    controller = live_controller()
    window = make_window(controller)
    note = vault / LOAF
    edited: list[bool] = []

    def edit_after_it_was_read(name: str, done: int, total: int, phase: str) -> None:
        if phase == "keyword" and done == total and not edited:  # every note read, not yet committed
            note.write_text(note.read_text(encoding="utf-8") + "\nA numbat watched the oven.\n", encoding="utf-8")
            edited.append(True)

    controller.indexProgress.connect(edit_after_it_was_read)
    finished: list[object] = []
    controller.indexFinished.connect(finished.append)
    assert controller.add_vault(vault) is not None
    assert controller.live.target is not None and controller.live.target[1] == ("kitchen",)  # watched at once
    qtbot.waitUntil(lambda: bool(finished), timeout=15000)
    assert edited
    search_and_wait(qtbot, window, "numbat")
    qtbot.waitUntil(lambda: window.results.model.rowCount() > 0, timeout=2000)
    hit = window.results.model.hit(0)
    assert hit is not None and hit.chunk.rel_path == LOAF
