"""Indexing runs on a worker: progress reaches the status bar, cancel stops it, writes are serialized."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.base.vault_state import Phase, VaultProgress
from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import FakeEmbedder, index_vault


def test_progress_is_shown_and_cancel_stops_embedding(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> None:
    fake = FakeEmbedder(delay=0.3)  # 198 chunks in groups of 32: about two seconds of embedding
    controller = make_controller(embedder_factory=lambda vc: fake)
    window = make_window(controller)
    progress: list[tuple[str, int, int, str]] = []
    controller.indexProgress.connect(lambda *args: progress.append(args))
    reports: list[Any] = []
    controller.indexFinished.connect(reports.append)
    controller.add_vault(sample_vault)
    assert controller.is_indexing()
    qtbot.waitUntil(lambda: any(p[3] == "embedding" for p in progress), timeout=10000)
    status = window.status
    assert status.progress.isVisible() and status.cancel.isVisible()
    assert "embedding" in status.vaults.text() or "Indexing" in status.vaults.text()
    assert any(p[3] == "keyword" and p[1] == p[2] for p in progress)  # the keyword pass completed first
    status.cancel.click()
    qtbot.waitUntil(lambda: bool(reports), timeout=10000)
    report = reports[0][0]
    assert not report.keyword.cancelled and report.keyword.documents == 36
    assert report.embedding is not None and report.embedding.cancelled
    assert report.embedding.embedded < report.embedding.desired
    assert not controller.is_indexing()
    assert not status.progress.isVisible()
    assert "embedding paused" in status.vaults.text()  # with what exists: "every note has a summary vector; passages 12% embedded"
    qtbot.waitUntil(lambda: status.resume.isVisible())
    # Resume finishes the embedding without reading a note again: the keyword index stays byte for byte.
    whoosh = controller.engine.paths.vault_dir("sample-vault") / "whoosh"
    before = {f.name: (f.stat().st_mtime_ns, f.stat().st_size) for f in whoosh.iterdir()}
    fake.delay = 0.0
    progress.clear()
    reports.clear()
    status.resume.click()
    qtbot.waitUntil(lambda: bool(reports), timeout=15000)
    report = reports[0][0]
    assert report.embedding is not None and not report.embedding.cancelled
    assert report.keyword.added == report.keyword.changed == 0
    assert {p[3] for p in progress} == {"embedding"}  # no keyword pass at all
    after = {f.name: (f.stat().st_mtime_ns, f.stat().st_size) for f in whoosh.iterdir()}
    # The index's files untouched; a full embedding pass may add spelling's term lists (`.cairnterms`) beside them.
    assert {name: after.get(name) for name in before} == before
    assert all(name in before or name.endswith(".cairnterms") for name in after)
    qtbot.waitUntil(lambda: "semantic ready" in status.vaults.text(), timeout=10000)
    assert not status.resume.isVisible()


def test_search_works_while_embeddings_are_built(
    qtbot: Any, make_controller: Callable[..., AppController], sample_vault: Path
) -> None:
    controller = make_controller(embedder_factory=lambda vc: FakeEmbedder(delay=0.3))
    progress: list[str] = []
    controller.indexProgress.connect(lambda v, d, t, phase: progress.append(phase))
    controller.add_vault(sample_vault)
    qtbot.waitUntil(lambda: "embedding" in progress, timeout=10000)
    controller.search("sourdough", "hybrid")
    qtbot.waitUntil(lambda: controller.response is not None, timeout=5000)
    assert controller.is_indexing()  # the search did not wait for the index writer
    assert controller.response.hits
    # Embedding in progress is said so, never "unavailable": in the search warnings, the board, the tree.
    warnings = " ".join(controller.response.warnings)
    assert "unavailable" not in warnings and "being embedded" in warnings
    p = controller.board.get("sample-vault")
    assert p is not None and p.phase is Phase.EMBEDDING and "unavailable" not in p.sentence()
    # New snapshots while vectors arrive do not reshuffle the shown list: a Refresh is offered instead.
    shown = controller.response
    controller.refresh()
    qtbot.waitUntil(lambda: controller.queries.results_outdated, timeout=5000)
    assert controller.response is shown
    controller.cancel_index()
    qtbot.waitUntil(lambda: not controller.is_indexing(), timeout=10000)
    qtbot.waitUntil(lambda: controller.response is not shown, timeout=5000)  # the job's end refreshes them


def test_index_requests_are_serialized(qtbot: Any, make_controller: Callable[..., AppController], sample_vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nalpha note\n", encoding="utf-8")
    controller = make_controller()
    started: list[list[str]] = []
    controller.indexStarted.connect(started.append)
    finished: list[Any] = []
    controller.indexFinished.connect(finished.append)
    controller.add_vault(sample_vault)
    controller.add_vault(other)  # arrives while the first run is going: queued, not parallel
    qtbot.waitUntil(lambda: len(finished) == 2, timeout=15000)
    assert started == [[sample_vault.name], ["other"]]
    assert [r[0].keyword.vault for r in finished] == [sample_vault.name, "other"]


def test_a_missing_vault_folder_is_reported_not_raised(qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    controller = make_controller()
    failures: list[str] = []
    controller.indexFailed.connect(failures.append)
    index_vault(qtbot, controller, gone)
    gone.rmdir()
    with qtbot.waitSignal(controller.indexFinished, timeout=10000):
        controller.index(["gone"])
    assert failures and "gone" in failures[0]


def test_health_dialog_lists_skipped_and_warned_files_and_opens_them(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path, recorder: Any
) -> None:
    from desktop.dialogs.health_dialog import IndexHealthDialog

    vault = tmp_path / "messy"
    vault.mkdir()
    (vault / "Fine.md").write_text("# Fine\n\nok\n", encoding="utf-8")
    (vault / "Bad yaml.md").write_text("---\ntitle: [oops\n---\n# Bad\n\nbody\n", encoding="utf-8")
    (vault / "Binary.md").write_bytes(b"\x00\x01\x02 not text")
    controller = make_controller()
    index_vault(qtbot, controller, vault)
    dialog = IndexHealthDialog(controller)
    qtbot.addWidget(dialog)
    states = {r.rel_path: (r.state, r.reason) for r in dialog.visible_rows()}
    assert states == {"Fine.md": ("indexed", ""), "Bad yaml.md": ("warning", "front_matter"), "Binary.md": ("skipped", "binary")}
    dialog.state_filter.setCurrentIndex(dialog.state_filter.findData("skipped"))
    assert [r.rel_path for r in dialog.visible_rows()] == ["Binary.md"]
    dialog.state_filter.setCurrentIndex(0)
    dialog.text_filter.setText("yaml")
    assert [r.rel_path for r in dialog.visible_rows()] == ["Bad yaml.md"]
    dialog.table.setCurrentIndex(dialog.proxy.index(0, 0))
    assert dialog.open_button.isEnabled()
    dialog.open_button.click()
    assert recorder.urls[-1].endswith("/messy/Bad%20yaml.md")


def timed_board(make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]) -> tuple[AppController, list[float]]:
    """A controller with a window whose progress board reads the clock `now[0]` (seconds) set by the test."""
    controller = make_controller()
    make_window(controller)
    now = [100.0]
    controller.board.clock = lambda: now[0]
    return controller, now


def test_the_status_bar_estimates_the_time_left_from_this_runs_rate(
    make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    controller, now = timed_board(make_controller, make_window)
    board = controller.board
    board._stored = {"notes": VaultProgress("notes", Phase.READY)}  # a vault the snapshot knows
    controller.indexStarted.emit(["notes"])
    controller.indexProgress.emit("notes", 400, 1000, "embedding")  # resumed: 400 came from the cache
    assert "embedding 400/1000 (40%)" in board.get("notes").sentence()
    now[0] += 30.0
    controller.indexProgress.emit("notes", 500, 1000, "embedding")  # 100 chunks in 30 s, 500 to go
    p = board.get("notes")
    assert p.eta == "about 2 min left"  # 150 s, not the 60 s 400 free chunks suggest
    controller.indexFinished.emit([])
    controller.indexStarted.emit(["notes"])
    controller.indexProgress.emit("notes", 10, 100, "keyword")
    assert board.get("notes").eta == ""  # a new run times itself afresh


def test_the_note_pass_shows_as_embedding_and_its_time_left_is_its_own_rate(
    make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    """One short vector per note first (notes a second), then passages (chunks a second): two rates."""
    from core.index.note_vectors import NOTE_PHASE

    controller, now = timed_board(make_controller, make_window)
    board = controller.board
    board._stored = {"notes": VaultProgress("notes", Phase.READY)}
    controller.indexStarted.emit(["notes"])
    controller.indexProgress.emit("notes", 0, 1000, NOTE_PHASE)
    now[0] += 10.0
    controller.indexProgress.emit("notes", 200, 1000, NOTE_PHASE)  # 20 notes a second: 40 s to go
    p = board.get("notes")
    assert p.phase is Phase.EMBEDDING and p.eta == "less than a minute left"
    controller.indexProgress.emit("notes", 100, 3000, "embedding")  # the passages: measured afresh
    now[0] += 10.0
    controller.indexProgress.emit("notes", 150, 3000, "embedding")  # 5 chunks a second: 570 s to go
    assert board.get("notes").eta == "about 10 min left"


def test_index_health_follows_indexing_progress_while_open_and_names_live_problems(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path
) -> None:
    from desktop.dialogs.health_dialog import IndexHealthDialog

    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "One.md").write_text("# One\n\nok\n", encoding="utf-8")
    controller = make_controller()
    index_vault(qtbot, controller, vault)
    dialog = IndexHealthDialog(controller)
    qtbot.addWidget(dialog)
    assert "notes: 1 note, keyword only (healthy)" in dialog.summary.text()  # semantic off is not "degraded"
    # What the index job reports reaches the open dialog and the status bar's source alike.
    controller.indexStarted.emit(["notes"])
    controller.indexProgress.emit("notes", 30, 120, "embedding")
    assert "embedding 25%" in dialog.summary.text() and "(indexing)" in dialog.summary.text()
    p = controller.board.get("notes")
    assert p is not None and p.percent == 25
    controller.live.failed.emit("Live updates: the file watcher stopped (boom); restarted it and caught up")
    assert "live updates: Live updates: the file watcher stopped (boom)" in dialog.summary.text()
    controller.indexFinished.emit([])
    assert "embedding 25%" not in dialog.summary.text()


def test_a_vault_indexed_by_another_process_is_shown_so_and_picked_up_when_done(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path
) -> None:
    from filelock import FileLock

    from core.base.paths import AppPaths
    from core.engine import Engine
    from desktop.state import describe_status

    vault = tmp_path / "elsewhere"
    vault.mkdir()
    for i in range(5):
        (vault / f"n{i}.md").write_text(f"# N{i}\n\nnote number {i}\n", encoding="utf-8")
    paths = AppPaths.from_env()
    Engine(paths, embedder_factory=None).add_vault(vault)
    other = FileLock(str(paths.vault_dir("elsewhere") / "write.lock"))  # `cairn index` in another process
    other.acquire(timeout=5)
    controller = make_controller()
    snaps: list[Any] = []
    controller.snapshotChanged.connect(snaps.append)
    controller.refresh()
    qtbot.waitUntil(lambda: bool(snaps) and snaps[-1][0].status.elsewhere, timeout=10000)
    assert describe_status(snaps[-1][0]) == ("indexing", "elsewhere: being indexed by another Cairn process")
    other.release()
    Engine(paths, embedder_factory=None).sync(embed=False)  # the other process finishes its index
    qtbot.waitUntil(lambda: snaps[-1][0].status.built, timeout=15000)  # the app looked again by itself
    assert snaps[-1][0].status.info.documents == 5


def test_a_catch_up_retry_is_said_and_the_vault_is_live_again_once_it_goes_through(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path
) -> None:
    """The watcher's CatchUpRetry reaches the status bar as a live problem; the retried catch-up clears it."""
    from core.base.vault_state import LiveState

    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "One.md").write_text("# One\n\nok\n", encoding="utf-8")
    controller = make_controller()
    index_vault(qtbot, controller, vault)
    qtbot.waitUntil(lambda: "notes" in controller.live.caught_up, timeout=10000)
    said: list[str] = []
    controller.message.connect(said.append)
    controller.live.failed.emit("Live update of notes failed: could not bring the index in step with the folder (disk full); retrying in 2 s")
    assert any("retrying in 2 s" in m for m in said)
    shown = controller.board.get("notes")
    assert shown is not None and shown.live is LiveState.FAILED
    controller.live.caughtUp.emit("notes")  # the retried catch-up went through
    assert controller.board.live_problem == ""
    shown = controller.board.get("notes")
    assert shown is not None and shown.live is LiveState.LIVE


def test_the_tree_the_status_bar_and_index_health_tell_one_state(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    from desktop.dialogs.health_dialog import IndexHealthDialog

    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "One.md").write_text("# One\n\nok\n", encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    index_vault(qtbot, controller, vault)
    dialog = IndexHealthDialog(controller)
    qtbot.addWidget(dialog)
    controller.indexStarted.emit(["notes"])
    controller.indexProgress.emit("notes", 43, 100, "embedding")
    tree_row = window.tree.model.item(0).text()
    assert tree_row == "notes  (1) · embedding 43%"
    assert "embedding 43%" in window.status.vaults.text() and "embedding 43%" in dialog.summary.text()
    assert "unavailable" not in tree_row + window.status.vaults.text() + dialog.summary.text()
    controller.indexFinished.emit([])
    assert window.tree.model.item(0).text().startswith("notes  (1)") and "embedding" not in window.tree.model.item(0).text()


def test_the_status_bar_says_every_note_has_a_summary_vector_while_passages_are_embedded(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    """After the note pass the vault is found by meaning note by note: not "embedding 0%" or "paused at 0%" (#30)."""
    from core.index.note_vectors import NOTE_PHASE

    vault = tmp_path / "long"
    vault.mkdir()
    for i in range(40):  # three long sections each: a summary vector first, then ~4 passages
        body = "\n\n".join(f"## Part {k}\n\n" + f"topic{i} " + "filler words " * 120 for k in range(3))
        (vault / f"n{i:02}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    fake = FakeEmbedder(delay=0.3)
    controller = make_controller(embedder_factory=lambda vc: fake)
    window = make_window(controller)
    phases: list[tuple[int, int, str]] = []
    controller.indexProgress.connect(lambda v, d, t, ph: phases.append((d, t, ph)))
    reports: list[Any] = []
    controller.indexFinished.connect(reports.append)
    controller.add_vault(vault)
    qtbot.waitUntil(lambda: any(ph == NOTE_PHASE for _, _, ph in phases), timeout=10000)
    assert "summary vectors for notes" in controller.board.get("long").sentence()
    text = window.status.vaults.text
    qtbot.waitUntil(lambda: "every note has a summary vector · embedding passages" in text(), timeout=10000)
    assert any(ph == NOTE_PHASE and d == t for d, t, ph in phases)
    window.status.cancel.click()
    qtbot.waitUntil(lambda: bool(reports), timeout=10000)
    # Openings go first, so by now some summaries may be replaced: "every note has a (summary) vector".
    qtbot.waitUntil(lambda: "embedding paused; every note has a" in text(), timeout=10000)
    assert "% embedded" in text() and "paused at" not in text()
