"""The parallel build's worker forked after the imports (the CLI on Linux): the same index, and spawn elsewhere.

`core.base.spare_core.fork` is used only where `fork_safe()` holds (Linux, no other thread alive) and
only when the CLI asked for it (`prestart(..., fork_later=True)`); everything else spawns, as before.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

import pytest

import core.base.spare_core as sc
import core.index.parallel_build as pb
from core.base.forked_child import ForkedProcess
from core.cli import early_worker
from core.cli.main import main
from core.index.indexer import SCRATCH
from core.vault.chunker import ChunkLimits
from core.vault.scanner import ScanEntry
from tests.core.index.test_parallel_build import Spy, _assert_same_index, _index, _with_bad_files
from tests.fixture_notes import write_vault

REPO = Path(__file__).resolve().parents[3]
PROBE = "tests.core.index.test_parallel_fork:report"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked on Linux only")


def report(conn: Any) -> None:
    """A forked child's view of what it inherited; it ends when the parent's end of the pipe closes."""
    conn.send(
        (
            signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
            gc.isenabled(),
            gc.get_freeze_count() > 0,
            gc.callbacks == [],
        )
    )
    try:
        conn.recv()
    except EOFError:
        return  # no copy of the parent's end is open here: the end is seen


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    return _with_bad_files(write_vault(tmp_path / "vault", 60))


@pytest.fixture()
def no_other_thread() -> None:
    if threading.active_count() != 1:
        pytest.skip("the test runner has threads of its own: nothing may be forked here")


def _worker_of(spy: Spy) -> Any:
    return spy.builds[0]._worker._process


def _plain_then_fork_asked(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Spy]:
    """The vault indexed in one process (the reference), then a fork asked for as the CLI asks on Linux."""
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    return plain, spy


@linux_only
def test_a_forked_worker_builds_the_same_index(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_other_thread: None
) -> None:
    plain, spy = _plain_then_fork_asked(vault, tmp_path, monkeypatch)
    fast = _index(vault, tmp_path / "b")
    fast.sync()
    worker = _worker_of(spy)
    assert isinstance(worker, ForkedProcess) and not worker.is_alive()  # stopped with the build
    assert spy.built >= 1 and spy.local >= 1
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
    assert pb.WORKER_TARGET not in sc._PENDING


@linux_only
def test_a_process_with_another_thread_spawns_the_worker(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_other_thread: None
) -> None:
    """A thread started after the CLI asked for a fork (as the app's or the watcher's would be): spawn."""
    plain, spy = _plain_then_fork_asked(vault, tmp_path, monkeypatch)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert not sc.fork_safe()
        fast = _index(vault, tmp_path / "b")
        fast.sync()
    finally:
        stop.set()
        other.join()
    assert isinstance(_worker_of(spy), SpawnProcess) and spy.built >= 1
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_other_platforms_spawn(platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    assert not early_worker.forks() and not sc.fork_safe()
    made: list[str] = []
    monkeypatch.setattr(sc, "spawn", lambda target, name: made.append("spawn"))
    monkeypatch.setattr(sc, "fork", lambda target, name: made.append("fork"))
    sc.start_child(pb.WORKER_TARGET, pb.WORKER_NAME, forked=True)
    assert made == ["spawn"]


def test_the_cli_asks_for_a_fork_on_linux_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = write_vault(tmp_path / "vault", 10)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(early_worker, "PARALLEL_MIN_WORK_S", 0.001)
    monkeypatch.setattr(early_worker, "FORK_MIN_WORK_S", 0.001)
    asked: list[bool] = []
    monkeypatch.setattr(early_worker, "prestart", lambda target, name, fork_later=False: asked.append(fork_later))
    for platform in ("linux", "darwin", "win32"):
        monkeypatch.setattr(sys, "platform", platform)
        early_worker.start_early([str(vault)])
    assert asked == [True, False, False]


def test_a_fork_verdict_is_none_without_a_spare_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "spare_core", lambda **_: False)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    assert sc.take(pb.WORKER_TARGET) is None
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    assert sc.take(pb.WORKER_TARGET) == sc.ForkLater(pb.WORKER_TARGET, pb.WORKER_NAME)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    sc.discard(pb.WORKER_TARGET)  # nothing was started: nothing to stop
    assert pb.WORKER_TARGET not in sc._PENDING


@linux_only
def test_the_forked_child_lets_go_of_the_parents_share(no_other_thread: None) -> None:
    """Ctrl-C is the parent's to handle, the inherited heap is frozen, and the child sees the pipe end."""
    before = signal.getsignal(signal.SIGINT)
    started = sc.fork(PROBE, "cairn-fork-probe")
    try:
        assert started.conn.recv() == (True, True, True, True)
    finally:
        started.conn.close()
    started.process.join(timeout=30)
    assert started.process.exitcode == 0  # it ended by itself, on the end of its pipe
    assert signal.getsignal(signal.SIGINT) == before  # the parent's own handlers are untouched


@linux_only
def test_a_forked_child_repeats_no_buffered_output_and_no_exit_handler(tmp_path: Path) -> None:
    """Text waiting in the parent's stdout buffer and the parent's atexit handlers are the parent's alone."""
    probe = (
        "import atexit, sys\n"
        "from core.base import spare_core as sc\n"
        "atexit.register(lambda: print('exit handler'))\n"
        "sys.stdout.write('buffered ')\n"
        "started = sc.fork('tests.core.index.test_parallel_fork:report', 'cairn-fork-probe')\n"
        "started.conn.recv()\n"
        "started.conn.close()\n"
        "started.process.join(30)\n"
        "print(started.process.exitcode)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "buffered 0\nexit handler\n"


@linux_only
def test_cairn_index_forks_its_worker_and_leaves_nothing_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_other_thread: None
) -> None:
    vault = write_vault(tmp_path / "vault", 40)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(early_worker, "FORK_MIN_WORK_S", 0.001)
    monkeypatch.setattr(pb, "FORK_MIN_WORK_S", 0.001)
    monkeypatch.setattr(pb, "MIN_JOB_NOTES", 5)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    workers: list[Any] = []
    real_init = pb.WorkerProcess.__init__

    def watching(self: pb.WorkerProcess, started: sc.Started, setup: tuple[Any, ...]) -> None:
        workers.append(started.process)
        real_init(self, started, setup)

    monkeypatch.setattr(pb.WorkerProcess, "__init__", watching)
    assert main(["index", "--vault", str(vault), "--no-embed", "--quiet"]) == 0
    assert "40 notes" in capsys.readouterr().out
    assert len(workers) == 1 and isinstance(workers[0], ForkedProcess)
    assert not workers[0].is_alive() and workers[0].exitcode is not None  # stopped and reaped
    assert pb.WORKER_TARGET not in sc._PENDING


def test_claims_are_many_and_smallest_in_the_middle(tmp_path: Path) -> None:
    """Equal notes: `CLAIMS` claims whatever starts the worker, each `TAPER` of the one nearer its end, so
    the last ones taken (in the middle, where the two processes meet) are the smallest."""
    notes: list[Any] = [(ScanEntry(f"n{i}.md", tmp_path / f"n{i}.md", 10_000, 0), None) for i in range(200)]
    jobs = pb.cut_jobs(notes)
    assert [n for job in jobs for n in job] == notes
    sizes = [len(job) for job in jobs]
    assert len(sizes) == pb.CLAIMS
    half = pb.CLAIMS // 2
    assert sizes[:half] == sorted(sizes[:half], reverse=True) and sizes[half:] == sorted(sizes[half:])
    assert sizes[0] >= 3 * sizes[half - 1]


@pytest.mark.parametrize(("threads", "expected"), [(1, True), (2, False)])
def test_less_work_is_worth_a_forked_worker_than_a_spawned_one(
    threads: int, expected: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Work between the two thresholds gets a worker only where it would be forked."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(threading, "active_count", lambda: threads)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    monkeypatch.setattr(pb, "FORK_MIN_WORK_S", 1.0)
    monkeypatch.setattr(pb, "MIN_WORK_S", 3.0)
    monkeypatch.setattr(pb, "work_s", lambda notes, size: 2.0)
    started: list[bool] = []

    def start_child(target: str, name: str, *, forked: bool, first: object = None) -> object:
        started.append(forked)
        return object()

    monkeypatch.setattr(pb, "start_child", start_child)
    monkeypatch.setattr(pb, "WorkerProcess", lambda started, setup: None)
    monkeypatch.setattr(pb.ParallelBuild, "__init__", lambda self, *a: None)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    notes: list[Any] = [(ScanEntry("n.md", tmp_path / "n.md", 10, 0), None)]
    build = pb.ParallelBuild.start("v", notes, ChunkLimits(), 1000, tmp_path / "scratch")
    assert (build is not None) == expected and started == ([True] if expected else [])


@linux_only
def test_a_cancelled_sync_stops_the_forked_worker(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_other_thread: None
) -> None:
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    index = _index(vault, tmp_path)
    cancel = threading.Event()
    stats = index.sync(progress=lambda done, total, phase: cancel.set() if done >= 10 else None, cancel=cancel)
    worker = _worker_of(spy)
    assert stats.cancelled and 0 < stats.documents < 61
    assert isinstance(worker, ForkedProcess) and not worker.is_alive()
    assert not (index.dir / SCRATCH).exists()
    assert index.keyword.doc_count() == sum(len(r.chunks) for r in index.files.values())


@linux_only
def test_a_killed_forked_worker_gives_its_jobs_back(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_other_thread: None
) -> None:
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    counting = pb.ParallelBuild.__iter__

    def killing(build: Any) -> Any:
        for n, unit in enumerate(counting(build)):
            if n == 0:  # the worker holds a job now: killed as the system would (out of memory)
                os.kill(build._worker._process.pid, signal.SIGKILL)
            yield unit

    monkeypatch.setattr(pb.ParallelBuild, "__iter__", killing)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    fast = _index(vault, tmp_path / "b")
    stats = fast.sync()
    assert isinstance(_worker_of(spy), ForkedProcess)
    assert spy.local >= 2 and stats.documents == 61
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
