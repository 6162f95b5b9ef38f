"""A first index built in two processes is the index built in one, skips, changes and all."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import core.base.spare_core as sc
import core.index.parallel_build as pb
from core.base.config import EngineConfig, VaultConfig
from core.base.paths import AppPaths
from core.index.bulk_writer import BulkWriter
from core.index.indexer import SCRATCH, VaultIndex
from core.vault.chunker import ChunkLimits
from core.vault.scanner import ScanEntry
from tests.fixture_notes import write_vault
from tests.index_dump import index_dump_by_chunk
from tests.stuck_note import StuckPath

TIL = next((p / "shared/data/vaults/simonw-til" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults").is_dir()), Path("/none"))



def _with_bad_files(root: Path) -> Path:
    """60 notes, then a binary file, one over the size limit and an empty one."""
    (root / "binary.md").write_bytes(b"# looks like a note\x00\x01\x02")
    (root / "big.md").write_bytes(b"x" * 300_000)
    (root / "empty.md").write_bytes(b"")
    return root


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    """60 generated notes (tests/fixture_notes.py) and the bad files."""
    return _with_bad_files(write_vault(tmp_path / "vault", 60))


@pytest.fixture()
def real_vault(tmp_path: Path) -> Path:
    """60 real notes of simonw-til, where the shared vaults are beside the checkout."""
    if not TIL.is_dir():
        pytest.skip("needs the simonw-til vault")
    root = tmp_path / "vault"
    for src in sorted(TIL.rglob("*.md"))[:60]:
        dest = root / src.relative_to(TIL)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    return _with_bad_files(root)


class Spy:
    """Counts the jobs the worker built and those indexed here."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, worker: bool) -> None:
        self.built = 0
        self.local = 0
        self.builds: list[Any] = []
        monkeypatch.setattr(pb, "MIN_WORK_S", 0.0 if worker else float("inf"))
        monkeypatch.setattr(pb, "FORK_MIN_WORK_S", 0.0 if worker else float("inf"))
        monkeypatch.setattr(pb, "MIN_JOB_NOTES", 7)  # several jobs, so both processes get some
        monkeypatch.setattr(pb, "MAX_JOB_NOTES", 7)
        monkeypatch.setattr(pb, "spare_core", lambda: True)  # whatever else runs on this machine
        real_iter = pb.ParallelBuild.__iter__
        spy = self

        def counting(build: Any) -> Any:
            spy.builds.append(build)
            for unit in real_iter(build):
                if isinstance(unit, pb.BuiltJob):
                    spy.built += 1
                elif not isinstance(unit, int):  # an int: the notes the worker has answered so far
                    spy.local += 1
                yield unit

        monkeypatch.setattr(pb.ParallelBuild, "__iter__", counting)


def _assert_same_index(one: Any, other: Any) -> None:
    """The same postings, stored fields and length bytes by chunk; the same field totals up to merges.

    Whoosh's merge re-sums a field's total length from the documents' one-byte (rounded)
    lengths, so an index whose segments were merged otherwise has slightly other totals.
    """
    a, b = _no_length_columns(index_dump_by_chunk(one)), _no_length_columns(index_dump_by_chunk(other))
    totals_a, totals_b = a.pop("lengths"), b.pop("lengths")
    assert a == b
    assert totals_a == pytest.approx(totals_b, rel=0.03)


def _no_length_columns(dump: dict[str, Any]) -> dict[str, Any]:
    """A chunk's field length read as 0 where its segment has no length column for the field (no chunk
    of that segment has it: a note committed alone, as a refused batch's notes are) and Whoosh says None."""
    return {k: (v[0], [n or 0 for n in v[1]]) if k.startswith("doc:") else v for k, v in dump.items()}


def _index(vault: Path, home: Path) -> VaultIndex:
    cfg = EngineConfig(vaults=(VaultConfig(name="v", root=str(vault)),), max_file_bytes=200_000)
    return VaultIndex(cfg.vaults[0], AppPaths(home), cfg)


def test_a_two_process_index_equals_the_in_process_one(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _two_process_equals_in_process(vault, tmp_path, monkeypatch)


def test_a_two_process_index_of_real_notes_equals_the_in_process_one(real_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _two_process_equals_in_process(real_vault, tmp_path, monkeypatch)


def _two_process_equals_in_process(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain_stats = plain.sync()
    spy = Spy(monkeypatch, worker=True)
    fast = _index(vault, tmp_path / "b")
    progress: list[int] = []
    fast_stats = fast.sync(progress=lambda done, total, phase: progress.append(done))
    assert spy.built >= 1 and spy.local >= 1  # both processes indexed notes
    assert plain_stats.documents == fast_stats.documents == 61
    assert plain_stats.skipped == fast_stats.skipped == {"binary": 1, "too_large": 1}
    assert plain.files == fast.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
    assert fast.keyword.doc_count() == sum(len(r.chunks) for r in fast.files.values())
    assert progress == sorted(progress) and progress[-1] == 62  # big.md is skipped by the scan, before any job
    assert not (fast.dir / SCRATCH).exists()  # the worker's scratch folder is gone
    assert plain.links._notes == fast.links._notes


def test_changed_and_removed_notes_leave_no_stale_chunks(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch, worker=True)
    index = _index(vault, tmp_path / "a")
    index.sync()
    notes = sorted(p for p in vault.rglob("*.md") if p.stat().st_size < 100_000 and b"\x00" not in p.read_bytes())
    for p in notes[:20]:
        p.write_text(p.read_text(encoding="utf-8") + "\n\nAn added line about zanzibar.\n", encoding="utf-8")
    for p in notes[20:22]:
        p.unlink()
    (vault / "binary.md").write_text("# Mended\n\nNow a note about zanzibar.\n", encoding="utf-8")
    stats = index.sync()
    assert spy.built >= 2  # the second sync used the worker too
    assert (stats.added, stats.changed, stats.removed) == (1, 20, 2)
    Spy(monkeypatch, worker=False)
    fresh = _index(vault, tmp_path / "b")
    fresh.sync()
    assert index.files == fresh.files
    assert index_dump_by_chunk(index.keyword._ix, stats=False) == index_dump_by_chunk(fresh.keyword._ix, stats=False)


def test_a_segment_the_index_refuses_goes_in_note_by_note(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one commit fails on the worker's segment (a full disk, say): this process's notes and the
    worker's (read again here) go in the in-process way, and the index is the one a serial build makes."""
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    fast = _index(vault, tmp_path / "b")
    real_commit = BulkWriter.commit
    refused: list[int] = []

    def refuse(writer: BulkWriter, stale: Any, built: Any) -> None:
        if built:
            refused.append(len(built))
            writer.cancel()
            raise OSError("disk full")
        real_commit(writer, stale, built)

    monkeypatch.setattr(BulkWriter, "commit", refuse)
    stats = fast.sync()
    assert spy.built >= 1 and refused  # the one commit, then the segment alone, were refused
    assert stats.documents == 61
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
    assert plain.links._notes == fast.links._notes


def test_a_cancelled_sync_stops_the_worker(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch, worker=True)
    index = _index(vault, tmp_path)
    cancel = threading.Event()
    stats = index.sync(progress=lambda done, total, phase: cancel.set() if done >= 10 else None, cancel=cancel)
    assert stats.cancelled
    assert 0 < stats.documents < 61
    assert not spy.builds[0]._worker._process.is_alive()
    assert not (index.dir / SCRATCH).exists()
    assert index.keyword.doc_count() == sum(len(r.chunks) for r in index.files.values())


def test_no_worker_without_a_spare_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sc, "busy_cores", lambda **_: 1.5)
    assert not sc.spare_core()
    monkeypatch.setattr(sc, "busy_cores", lambda **_: 0.3)
    assert sc.spare_core()
    monkeypatch.setattr(sc, "busy_cores", lambda **_: None)  # not Linux: the load average decides
    monkeypatch.setattr(sc.os, "getloadavg", lambda: (1.5, 1.0, 1.0), raising=False)
    assert not sc.spare_core()
    monkeypatch.setattr(sc.os, "getloadavg", lambda: (0.4, 1.0, 1.0), raising=False)
    assert sc.spare_core()
    monkeypatch.setattr(sc.os, "cpu_count", lambda: 1)
    assert not sc.spare_core()


def test_busy_cores_reads_the_last_moment_not_the_last_minute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  1000 0 200 5000 100 0 0 0 50 0\ncpu0 ...\n")
    later = "cpu  1060 0 20{} 5130 110 0 0 0 90 0\n"  # 66 busy of 206 ticks (guest counts within user)

    def tick(seconds: float) -> None:
        stat.write_text(later.format(6))

    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sc.time, "sleep", tick)
    assert sc.busy_cores(stat=stat) == pytest.approx(66 / 206 * 2)
    assert sc.busy_cores(stat=tmp_path / "missing") is None  # not Linux
    stat.write_text("cpu  1 2\n")
    assert sc.busy_cores(stat=stat) is None  # a format it does not know


def test_niced_work_leaves_a_core_spare_for_a_normal_priority_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  1000 0 200 5000 100 0 0 0 0 0\n")

    def tick(seconds: float) -> None:  # 200 ticks: 10 of user, 180 of nice-15 jobs, 10 idle
        stat.write_text("cpu  1010 180 200 5010 100 0 0 0 0 0\n")

    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sc.time, "sleep", tick)
    monkeypatch.setattr(sc, "niced_yield", lambda: True)
    assert sc.busy_cores(stat=stat) == pytest.approx(10 / 200 * 2)
    monkeypatch.setattr(sc, "niced_yield", lambda: False)  # this process is niced itself: they compete
    stat.write_text("cpu  1000 0 200 5000 100 0 0 0 0 0\n")
    assert sc.busy_cores(stat=stat) == pytest.approx(190 / 200 * 2)


def _stuck_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> tuple[Any, Path, list[Any]]:
    """A build of three one-note jobs whose first one never finishes in the worker."""
    monkeypatch.setattr(pb, "MIN_WORK_S", 0.0)
    monkeypatch.setattr(pb, "MIN_JOB_NOTES", 1)
    monkeypatch.setattr(pb, "MAX_JOB_NOTES", 1)
    monkeypatch.setattr(pb, "spare_core", lambda: True)
    started = tmp_path / "started"
    notes: list[Any] = [(ScanEntry("stuck.md", StuckPath(started), 1, 0), None)]  # type: ignore[arg-type]
    for name in ("a.md", "b.md"):
        path = tmp_path / name
        path.write_text(f"# {name}\n\nA note about zanzibar.\n", encoding="utf-8")
        notes.append((ScanEntry(name, path, path.stat().st_size, 0), None))
    build = pb.ParallelBuild.start("v", notes, ChunkLimits(), 100_000, tmp_path / "scratch", **kwargs)
    assert build is not None
    deadline = time.monotonic() + 60
    while not started.exists():  # the worker is inside the stuck job
        assert time.monotonic() < deadline, "the worker never started the first job"
        time.sleep(0.05)
    return build, started, [[n] for n in notes]


def _drain(build: Any, seconds: float) -> list[Any]:
    """Iterate the build in a thread: a build that waits for a dead worker must not hang the test."""
    units: list[Any] = []
    thread = threading.Thread(target=lambda: units.extend(build), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the build still waits after {seconds} s"
    return units


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL here")
def test_a_killed_worker_gives_its_jobs_back_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    build, _, jobs = _stuck_build(tmp_path, monkeypatch)
    try:
        workers = [p.pid for p in multiprocessing.active_children() if p.pid is not None and p.pid not in before]
        assert workers
        for pid in workers:
            os.kill(pid, signal.SIGKILL)  # out of memory, a segfault, a user's kill
        units = _drain(build, 20.0)
    finally:
        build.close()
    def name(job: Any) -> str:
        return str(job[0][0].rel_path)

    assert sorted(units, key=name) == sorted(jobs, key=name)  # every job comes back to be indexed here


def test_cancel_is_seen_while_waiting_for_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cancel = threading.Event()
    build, _, _ = _stuck_build(tmp_path, monkeypatch, cancel=cancel)
    try:
        cancel.set()
        _drain(build, 10.0)
    finally:
        build.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL here")
def test_a_sync_whose_worker_is_killed_indexes_every_note_here(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed once it has answered claims whose segment has not come (their notes parsed, their chunks in
    its open segment): those claims and the one it held are indexed here, and nothing is lost or doubled."""
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    Spy(monkeypatch, worker=True)
    real_take = pb.ParallelBuild._take
    killed: list[int] = []

    def killing(build: Any, got: Any) -> Any:
        units = real_take(build, got)
        if not killed and build._open:  # an answered claim waits for its segment: killed as the system would
            killed.append(len(build._open))
            os.kill(build._worker._process.pid, signal.SIGKILL)
        return units

    monkeypatch.setattr(pb.ParallelBuild, "_take", killing)
    fast = _index(vault, tmp_path / "b")
    started = time.monotonic()
    stats = fast.sync()
    assert time.monotonic() - started < 60  # not the 15-minute wait
    assert killed  # (a segment already in the pipe when it died is still taken: it was finished)
    assert stats.documents == 61
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)


def test_a_worker_started_early_builds_the_same_index(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's early worker (started before the scan, beside the imports) is the one the build uses."""
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME)
    early = sc._PENDING[pb.WORKER_TARGET]
    fast = _index(vault, tmp_path / "b")
    fast.sync()
    early.thread.join()
    assert early.started is not None and spy.builds[0]._worker._process is early.started.process
    assert not early.started.process.is_alive()  # stopped with the build
    assert spy.built >= 1 and spy.local >= 1
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
    assert sc.take(pb.WORKER_TARGET) is False  # taken once: a second vault's build starts its own


def test_an_early_worker_a_small_sync_does_not_need_is_stopped(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch, worker=False)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME)
    early = sc._PENDING[pb.WORKER_TARGET]
    stats = _index(vault, tmp_path / "a").sync()
    assert stats.documents == 61 and not spy.builds  # in one process
    assert early.started is not None and not early.started.process.is_alive()


def test_a_busy_machine_gets_no_early_worker_and_no_build(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sc, "spare_core", lambda **_: False)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME)
    stats = _index(vault, tmp_path / "a").sync()
    assert stats.documents == 61 and not spy.builds  # the early verdict stands: no second look
    assert sc.take(pb.WORKER_TARGET) is False
    sc.discard(pb.WORKER_TARGET)  # nothing left to stop


def test_warnings_come_in_scan_order_whichever_process_read_the_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's jobs are taken in as they are done (this process's from the back come first): the
    sync report's warnings are still in the notes' order, as a one-process build lists them."""
    root = write_vault(tmp_path / "vault", 60)
    for i, path in enumerate(sorted(root.rglob("*.md"))):
        if i % 6 == 0:
            path.write_text(path.read_text(encoding="utf-8") + f"\n- [ ] a task 📅 2024-02-{30 + i % 2}\n", encoding="utf-8")
    Spy(monkeypatch, worker=False)
    plain = _index(root, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    fast = _index(root, tmp_path / "b")
    fast.sync()
    assert spy.built >= 1 and spy.local >= 1
    assert len(plain.info.warnings) >= 10
    assert fast.info.warnings == plain.info.warnings
