"""A first index built in two processes is the index built in one, skips, changes and all."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import core.index.parallel_build as pb
from core.base.config import EngineConfig, VaultConfig
from core.base.paths import AppPaths
from core.index.indexer import SCRATCH, VaultIndex
from tests.index_dump import index_dump_by_chunk

TIL = next((p / "shared/data/vaults/simonw-til" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults").is_dir()), Path("/none"))

pytestmark = pytest.mark.skipif(not TIL.is_dir(), reason="needs the simonw-til vault")


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for src in sorted(TIL.rglob("*.md"))[:60]:
        dest = root / src.relative_to(TIL)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    (root / "binary.md").write_bytes(b"# looks like a note\x00\x01\x02")
    (root / "big.md").write_bytes(b"x" * 300_000)
    (root / "empty.md").write_bytes(b"")
    return root


class Spy:
    """Counts the jobs the worker built and those indexed here."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, worker: bool) -> None:
        self.built = 0
        self.local = 0
        self.builds: list[Any] = []
        monkeypatch.setattr(pb, "MIN_NOTES", 1 if worker else 10**9)
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
                else:
                    spy.local += 1
                yield unit

        monkeypatch.setattr(pb.ParallelBuild, "__iter__", counting)


def _index(vault: Path, home: Path) -> VaultIndex:
    cfg = EngineConfig(vaults=(VaultConfig(name="v", root=str(vault)),), max_file_bytes=200_000)
    return VaultIndex(cfg.vaults[0], AppPaths(home), cfg)


def test_a_two_process_index_equals_the_in_process_one(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    assert index_dump_by_chunk(plain.keyword._ix) == index_dump_by_chunk(fast.keyword._ix)
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
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    fast = _index(vault, tmp_path / "b")

    def refuse(built: Any, replaced: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(fast.keyword, "add_built", refuse)
    stats = fast.sync()
    assert spy.built >= 1
    assert stats.documents == 61
    assert fast.files == plain.files
    assert index_dump_by_chunk(plain.keyword._ix) == index_dump_by_chunk(fast.keyword._ix)


def test_a_job_the_worker_fails_is_indexed_here(tmp_path: Path) -> None:
    class Failed:
        def ready(self) -> bool:
            return True

        def get(self, timeout: float) -> Any:
            raise RuntimeError("worker died")

    class Pool:
        def apply_async(self, fn: Any, args: Any) -> Failed:
            return Failed()

        def terminate(self) -> None: ...

        def join(self) -> None: ...

    jobs: list[Any] = [[("a", None)], [("b", None)], [("c", None)]]
    build = pb.ParallelBuild(Pool(), "v", jobs, None, 0, tmp_path / "scratch")  # type: ignore[arg-type]
    assert list(build) == jobs  # the first two failed in the worker, the third was never given to it
    build.close()


def test_a_cancelled_sync_stops_the_worker(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch, worker=True)
    index = _index(vault, tmp_path)
    cancel = threading.Event()
    stats = index.sync(progress=lambda done, total, phase: cancel.set() if done >= 10 else None, cancel=cancel)
    assert stats.cancelled
    assert 0 < stats.documents < 61
    assert not any(p.is_alive() for p in spy.builds[0]._pool._pool)
    assert not (index.dir / SCRATCH).exists()
    assert index.keyword.doc_count() == sum(len(r.chunks) for r in index.files.values())


def test_no_worker_without_a_spare_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pb.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(pb, "busy_cores", lambda: 1.5)
    assert not pb.spare_core()
    monkeypatch.setattr(pb, "busy_cores", lambda: 0.3)
    assert pb.spare_core()
    monkeypatch.setattr(pb, "busy_cores", lambda: None)  # not Linux: the load average decides
    monkeypatch.setattr(pb.os, "getloadavg", lambda: (1.5, 1.0, 1.0), raising=False)
    assert not pb.spare_core()
    monkeypatch.setattr(pb.os, "getloadavg", lambda: (0.4, 1.0, 1.0), raising=False)
    assert pb.spare_core()
    monkeypatch.setattr(pb.os, "cpu_count", lambda: 1)
    assert not pb.spare_core()


def test_busy_cores_reads_the_last_moment_not_the_last_minute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  1000 0 200 5000 100 0 0 0 50 0\ncpu0 ...\n")
    later = "cpu  1060 0 20{} 5130 110 0 0 0 90 0\n"  # 66 busy of 206 ticks (guest counts within user)

    def tick(seconds: float) -> None:
        stat.write_text(later.format(6))

    monkeypatch.setattr(pb.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(pb.time, "sleep", tick)
    assert pb.busy_cores(stat=stat) == pytest.approx(66 / 206 * 2)
    assert pb.busy_cores(stat=tmp_path / "missing") is None  # not Linux
    stat.write_text("cpu  1 2\n")
    assert pb.busy_cores(stat=stat) is None  # a format it does not know
