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
from core.index.segment_worker import DONE, FAILED, FINISHED, SEGMENT
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
    worker's (parsed already) go in the in-process way, and the index is the one a serial build makes."""
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


class Scripted:
    """A worker answering as the real one does, at once: claims done into an open segment, a segment
    every `every` claims, FINISH with the last one; claims in `fail` break the open segment; after
    `gone_after` answers it is gone."""

    def __init__(self, every: int = 0, fail: Any = (), gone_after: int | None = None) -> None:
        self.every, self.fail, self.gone_after = every, fail, gone_after
        self.asked: list[int] = []
        self.out: list[tuple[Any, ...]] = []
        self.open: list[int] = []
        self.answered = 0
        self.stopped = False

    def submit(self, index: int) -> None:
        self.asked.append(index)
        if index == pb.FINISH:
            self.out.append((FINISHED, None, self.open))
            self.open = []
        elif index in self.fail:
            self.out.append((FAILED, index))
            self.open = []
        else:
            self.out.append((DONE, index, [None], [None]))
            self.open.append(index)
            if self.every and len(self.open) >= self.every:
                self.out.append((SEGMENT, None, self.open))
                self.open = []

    def wait(self, timeout: float) -> bool:
        return bool(self.out) or self.gone()

    def gone(self) -> bool:
        return self.gone_after is not None and self.answered >= self.gone_after

    def answer(self) -> tuple[Any, ...] | None:
        if self.gone() or not self.out:
            return None
        self.answered += 1
        return self.out.pop(0)

    def kill(self) -> None: ...

    def stop(self) -> None:
        self.stopped = True


def _claims(count: int) -> list[Any]:
    return [[(f"n{i}.md", None)] for i in range(count)]


def _notes_of(units: list[Any]) -> list[str]:
    """Every note of the units, sorted (the answered-notes counts left out)."""
    jobs = [unit.job if isinstance(unit, pb.BuiltJob) else unit for unit in units if not isinstance(unit, int)]
    return sorted(note for job in jobs for note, _ in job)


def test_a_job_the_worker_fails_is_indexed_here(tmp_path: Path) -> None:
    jobs = _claims(3)
    build = pb.ParallelBuild(Scripted(fail=range(3)), jobs, tmp_path / "scratch")
    assert list(build) == jobs  # each failed in the worker, and came back in order
    build.close()


def test_claims_wait_for_their_segment_and_come_back_once_each(tmp_path: Path) -> None:
    """A claim's notes reach the caller with the segment that holds them (several claims a segment);
    every note comes once, from the worker or to be indexed here."""
    jobs = _claims(12)
    worker = Scripted(every=3)
    build = pb.ParallelBuild(worker, jobs, tmp_path / "scratch")
    units = list(build)
    answered = [u for u in units if isinstance(u, int)]
    assert answered == list(range(1, len(answered) + 1))  # the worker's notes so far, a claim (one note) at a time
    built = [u for u in units if isinstance(u, pb.BuiltJob)]
    assert built and all(len(u.job) == len(u.outcomes) == len(u.hashes) for u in built)
    assert max(len(u.job) for u in built) == 3  # three claims, one segment
    assert _notes_of(units) == sorted(n for job in jobs for n, _ in job)
    assert worker.asked[-1] == pb.FINISH and worker.asked.count(pb.FINISH) == 1
    assert build.answered_notes == sum(len(u.job) for u in built)


def test_a_broken_segment_gives_back_every_claim_it_held(tmp_path: Path) -> None:
    """Claims 0 and 1 are in the worker's open segment when claim 2 breaks it: all three are indexed here;
    a segment that arrived before stays the worker's."""
    jobs = _claims(10)
    build = pb.ParallelBuild(Scripted(every=3, fail={2}), jobs, tmp_path / "scratch")
    units = list(build)
    back = [u for u in units if not isinstance(u, pb.BuiltJob | int)]
    assert jobs[0] in back and jobs[1] in back and jobs[2] in back
    assert _notes_of(units) == sorted(n for job in jobs for n, _ in job)


def test_a_worker_gone_with_claims_in_its_open_segment_gives_them_back(tmp_path: Path) -> None:
    """Answered claims whose segment never came are not the worker's: they come back with the one it held."""
    jobs = _claims(10)
    worker = Scripted(gone_after=2)  # claims 0 and 1 answered into its open segment, then it died
    build = pb.ParallelBuild(worker, jobs, tmp_path / "scratch")
    units = _drain(build, 20.0)
    assert worker.stopped
    assert not [u for u in units if isinstance(u, pb.BuiltJob)]
    assert _notes_of(units) == sorted(n for job in jobs for n, _ in job)  # each once, all indexed here


def test_each_unit_is_taken_in_with_the_collector_paused_and_it_runs_again_between_them(tmp_path: Path) -> None:
    import gc

    jobs = _claims(4)
    assert gc.isenabled()
    build = pb.ParallelBuild(Scripted(fail=range(4)), jobs, tmp_path / "scratch")
    seen = []
    units = iter(build)
    for unit in units:
        seen.append((unit, gc.isenabled()))
        if len(seen) == 2:
            break  # a cancelled sync stops taking units: the collector is on again at once
    units.close()
    assert [enabled for _, enabled in seen] == [False, False]
    assert gc.isenabled()
    assert sorted([unit for unit, _ in seen] + list(build)) == sorted(jobs)  # the rest, taken in later, each once
    assert gc.isenabled()
    build.close()


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
    spy = Spy(monkeypatch, worker=True)
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
    assert killed and spy.built == 0  # no segment of the worker's came
    assert stats.documents == 61
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)


def _tocs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The segments of every table of contents written from now on (one per commit)."""
    from core.index.fast_writer import FastSegmentWriter

    written: list[int] = []
    real = FastSegmentWriter._commit_toc

    def counting(writer: Any, segments: Any) -> None:
        written.append(len(segments))
        real(writer, segments)

    monkeypatch.setattr(FastSegmentWriter, "_commit_toc", counting)
    return written


@pytest.mark.parametrize("bound", [1000, 1])
def test_a_first_parallel_index_is_one_commit(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    """Many claims, one table of contents: this process's segment and the worker's, listed together;
    with a segment bound of one note the worker finishes a segment every claim, all in that one commit."""
    import core.index.segment_worker as sw

    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sw, "SEGMENT_NOTES", bound)
    tocs = _tocs(monkeypatch)
    fast = _index(vault, tmp_path / "b")
    fast.sync()
    assert spy.built >= 1 and spy.local >= 1
    assert len(tocs) == 1 and tocs[0] == spy.built + 1  # the worker's segments and this process's
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
    assert plain.links._notes == fast.links._notes


def test_a_note_the_writer_refuses_is_skipped_and_the_rest_go_in(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's open writer refuses a note: its notes go note by note, the one note is skipped
    with its reason, and every other note (the worker's too) is indexed."""
    from core.index.keyword_store import KeywordStore

    (vault / "zz-refused.md").write_text("# Refused\n\nThe writer will not take this one.\n", encoding="utf-8")
    real_add = KeywordStore.add

    def add(writer: Any, docs: Any) -> None:
        docs = list(docs)
        if any(d.rel_path == "zz-refused.md" for d in docs):
            raise ValueError("refused by the writer")
        real_add(writer, docs)

    monkeypatch.setattr(KeywordStore, "add", staticmethod(add))  # this process only: the worker is spawned
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain_stats = plain.sync()
    spy = Spy(monkeypatch, worker=True)
    fast = _index(vault, tmp_path / "b")
    stats = fast.sync()
    assert spy.built >= 1 and spy.local >= 1  # the last claim (this note's) is this process's first
    assert stats.documents == plain_stats.documents == 61
    assert "zz-refused.md" not in fast.files
    assert [s.rel_path for s in fast.info.skipped if "refused" in s.detail] == ["zz-refused.md"]
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


def test_jobs_are_cut_by_work_not_by_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pb, "MIN_JOB_NOTES", 2)
    sizes = [200_000, 200_000] + [1_000] * 40 + [200_000, 200_000]  # two big chapters at each end
    notes: list[Any] = [(ScanEntry(f"n{i}.md", tmp_path / f"n{i}.md", size, 0), None) for i, size in enumerate(sizes)]
    jobs = pb.cut_jobs(notes)
    assert [n for job in jobs for n in job] == notes  # every note once, in order
    assert len(jobs[0]) == 2 and len(jobs[-1]) <= 2  # the big notes make short jobs
    assert max(len(job) for job in jobs) > 10  # the small ones long ones
    monkeypatch.setattr(pb, "MAX_JOB_NOTES", 5)
    assert max(len(job) for job in pb.cut_jobs(notes)) == 5


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


def test_the_worker_writes_every_segment_into_its_scratch_folder(tmp_path: Path) -> None:
    """No folder a job (each costs a directory made and removed): the segments lie side by side,
    each named by its own id, and each is taken into the index whole."""
    from core.base.models import Document
    from core.index.keyword_index import KeywordIndex
    from core.index.segment_worker import build_job

    root = write_vault(tmp_path / "vault", 12)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    built = [build_job("v", [(e, None) for e in half], ChunkLimits(), 200_000, str(scratch)) for half in (entries[:6], entries[6:])]
    assert not [p for p in scratch.iterdir() if p.is_dir()]
    segments = [segment for _, segment, _ in built if segment is not None]
    assert len(segments) == 2 and all(s.folder == str(scratch) for s in segments)
    assert not set(segments[0].files) & set(segments[1].files)
    index = KeywordIndex(tmp_path / "ix")
    for segment in segments:
        index.add_built(segment, [])
    docs = [o for outcomes, _, _ in built for o in outcomes if isinstance(o, Document)]
    assert len(docs) == 12 and index.doc_count() == sum(len(d.chunks) for d in docs)


def test_the_worker_finishes_a_segment_past_its_bound_and_the_rest_when_asked(tmp_path: Path) -> None:
    """Claims go into one open segment until it holds `bound` notes; FINISH answers what is left. The
    segments lie side by side in the scratch folder and one commit lists them all."""
    from core.index.keyword_index import KeywordIndex
    from core.index.segment_worker import OpenSegment, _answers

    root = write_vault(tmp_path / "vault", 12)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    claims = [[(e, None) for e in entries[i : i + 2]] for i in range(0, 12, 2)]
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (5, 1 << 30))
    open_segment = OpenSegment(str(scratch), (5, 1 << 30))
    answers = [a for claim in (0, 1, 2, 3, pb.FINISH) for a in _answers(open_segment, claim, setup)]
    assert [a[0] for a in answers] == [DONE, DONE, DONE, SEGMENT, DONE, FINISHED]
    assert answers[3][2] == [0, 1, 2] and answers[5][2] == [3]  # 6 notes passed the bound of 5
    built = [answers[3][1], answers[5][1]]
    assert not set(built[0].files) & set(built[1].files)
    index = KeywordIndex(tmp_path / "ix")
    index.bulk().commit([], built)
    assert index.doc_count() == sum(len(o.chunks) for a in answers if a[0] == DONE for o in a[2])
    assert index.segment_count() == 2


def test_a_note_that_breaks_the_workers_segment_drops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer refuses a note: the claim fails, and the open segment (with the claims before it) is dropped."""
    from core.index.keyword_store import KeywordStore
    from core.index.segment_worker import OpenSegment, _answers

    root = write_vault(tmp_path / "vault", 6)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    claims = [[(e, None) for e in entries[i : i + 2]] for i in range(0, 6, 2)]
    scratch = tmp_path / "building"
    scratch.mkdir()
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (1000, 1 << 30))
    open_segment = OpenSegment(str(scratch))
    assert _answers(open_segment, 0, setup)[0][0] == DONE
    real_add = KeywordStore.add

    def add(writer: Any, docs: Any) -> None:
        real_add(writer, docs)
        raise ValueError("refused by the writer")

    monkeypatch.setattr(KeywordStore, "add", staticmethod(add))
    assert _answers(open_segment, 1, setup) == [(FAILED, 1)]
    assert open_segment.writer is None and open_segment.claims == []
    monkeypatch.setattr(KeywordStore, "add", staticmethod(real_add))
    assert [a[0] for a in _answers(open_segment, 2, setup)] == [DONE]
    assert _answers(open_segment, pb.FINISH, setup)[0][2] == [2]  # a new segment, for the claims after


def _serve_in_thread(messages: list[Any]) -> list[Any]:
    """`serve` on one end of a pipe, in a thread; every message sent at once; its answers till it ends."""
    from multiprocessing import Pipe

    from core.index.segment_worker import serve

    ours, theirs = Pipe()
    thread = threading.Thread(target=serve, args=(theirs,), daemon=True)
    for message in messages:
        ours.send(message)
    thread.start()
    answers = []
    while not answers or answers[-1][0] not in (FINISHED,) and not (answers[-1][0] == FAILED and answers[-1][1] == pb.FINISH):
        assert ours.poll(30), "the worker did not answer"
        answers.append(ours.recv())
    ours.close()
    thread.join(10)
    assert not thread.is_alive()
    return answers


def test_finish_waiting_behind_the_last_claim_is_answered_after_it(tmp_path: Path) -> None:
    """FINISH already there when the last claim is done: the segment is finished first, but the claim's
    answer still comes first (its notes are what the segment's claims name)."""
    root = write_vault(tmp_path / "vault", 4)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    claims = [[(e, None) for e in entries[:2]], [(e, None) for e in entries[2:]]]
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (1000, 1 << 30))
    answers = _serve_in_thread([setup, 0, 1, pb.FINISH])
    assert [a[0] for a in answers] == [DONE, DONE, FINISHED]
    assert answers[-1][2] == [0, 1] and answers[-1][1] is not None


def test_an_answer_that_will_not_pickle_fails_its_claim_and_the_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.index.segment_worker as sw

    def answers(open_segment: Any, claim: int, setup: Any) -> list[Any]:
        return [(FINISHED, None, [])] if claim == pb.FINISH else [(DONE, claim, [lambda: None], [None])]

    monkeypatch.setattr(sw, "_answers", answers)
    setup = ("v", [[]], ChunkLimits(), 200_000, str(tmp_path), (1000, 1 << 30))
    assert _serve_in_thread([setup, 0, pb.FINISH]) == [(FAILED, 0), (FAILED, pb.FINISH)]
