"""The config's and the index's cross-process lock: exclusive against filelock's on the same file,
re-entrant from any thread, waits and times out as filelock did, and a cold index imports no filelock."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import filelock
import pytest

from core.base.file_lock import FileLock, LockTimeout
from tests.core.cli_probe import probe_script

REPO = Path(__file__).resolve().parents[3]
POSIX = pytest.mark.skipif(os.name == "nt", reason="on Windows filelock does the locking itself")

# A second process holding the lock until its stdin closes.
HOLDER = """
import sys
from core.base.file_lock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire(timeout=10)
print("held", flush=True)
sys.stdin.read()
"""


def test_a_lock_held_by_filelock_keeps_this_one_out_and_the_other_way_round(tmp_path: Path) -> None:
    """Older Cairns and other tools lock these files with filelock: both must exclude each other."""
    path = tmp_path / "write.lock"
    other = filelock.FileLock(str(path))
    other.acquire(timeout=1)
    mine = FileLock(path)
    with pytest.raises(LockTimeout):
        mine.acquire(timeout=0.15)
    assert not mine.is_locked
    other.release()
    mine.acquire(timeout=0)
    assert mine.is_locked
    with pytest.raises(filelock.Timeout):
        filelock.FileLock(str(path)).acquire(timeout=0.15)
    mine.release()
    assert not mine.is_locked
    filelock.FileLock(str(path)).acquire(timeout=0)  # free again (released with the process's lock object)
    assert path.exists()  # left in place: unlinking a lock file splits waiters across two files


def test_another_process_holding_it_makes_acquire_time_out_then_it_is_free(tmp_path: Path) -> None:
    path = tmp_path / "config.json.lock"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    pipe = subprocess.PIPE
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], cwd=REPO, env=env, stdin=pipe, stdout=pipe, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        lock = FileLock(path, timeout=0.2)
        started = time.monotonic()
        with pytest.raises(LockTimeout), lock:
            pass
        assert time.monotonic() - started >= 0.2
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
    with FileLock(path, timeout=5) as lock:
        assert lock.is_locked


def test_acquire_waits_for_a_release_within_its_timeout(tmp_path: Path) -> None:
    path = tmp_path / "write.lock"
    other = filelock.FileLock(str(path), thread_local=False)  # released by the timer's thread
    other.acquire(timeout=1)
    threading.Timer(0.2, other.release).start()
    lock = FileLock(path)
    lock.acquire(timeout=5)
    assert lock.is_locked
    lock.release()


def test_it_is_reentrant_and_not_per_thread(tmp_path: Path) -> None:
    """A vault's index re-enters its lock from whichever thread holds the index's own lock."""
    path = tmp_path / "write.lock"
    lock = FileLock(path)
    worker = threading.Thread(target=lock.acquire, kwargs={"timeout": 1})
    worker.start()
    worker.join()
    lock.acquire(timeout=0)  # held by this process already: no wait, no second file lock
    lock.release()
    assert lock.is_locked
    with pytest.raises(filelock.Timeout):
        filelock.FileLock(str(path)).acquire(timeout=0)
    lock.release()
    lock.release()  # one release too many is a no-op, as filelock's
    assert not lock.is_locked
    filelock.FileLock(str(path)).acquire(timeout=0)


def test_the_lock_files_folder_is_made_when_missing(tmp_path: Path) -> None:
    path = tmp_path / "indexes" / "notes" / "write.lock"
    with FileLock(path, timeout=0):
        assert path.is_file()


@POSIX
def test_a_file_system_without_flock_falls_back_to_filelock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Some network mounts answer ENOSYS to `flock`: filelock's own fallback takes over, as before."""
    import fcntl

    def no_flock(fd: int, op: int) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    path = tmp_path / "write.lock"
    lock = FileLock(path)
    with pytest.warns(UserWarning, match="flock not supported"):
        lock.acquire(timeout=1)
    assert lock.is_locked and lock._library is not None
    other = FileLock(path)  # another process on the same mount: its lock file is the marker
    with pytest.warns(UserWarning, match="flock not supported"), pytest.raises(LockTimeout):
        other.acquire(timeout=0.15)
    lock.release()
    assert not lock.is_locked and not lock._library.is_locked


def test_a_cold_index_takes_its_locks_without_importing_filelock(tmp_path: Path) -> None:
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n\nSee [[Plan]].\n", encoding="utf-8")
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-c", probe_script(("filelock",)), "index", "--vault", str(vault), "--no-embed", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), done.stderr
    assert json.loads(done.stdout)["vaults"][0]["documents"] == 1
    assert report["loaded"] == ([] if os.name != "nt" else ["filelock"])
    assert (tmp_path / "home" / "config.json.lock").exists()
