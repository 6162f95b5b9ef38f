"""An exclusive lock on a file across processes: the config's writers and each vault's index writer.

On POSIX it is the lock filelock takes (`flock` on the open lock file, which is left in
place), so it excludes a process that locks the same path with filelock and the other way
round; what this module adds is not importing filelock where `flock` works. That import
(with the `logging`, `platform` and `secrets` it pulls in) was ~12-16 ms of CPU in every
cold `cairn index` of a small vault, which takes these locks twice and nothing else of it.
On Windows, and on a file system without `flock` (some network mounts answer ENOSYS),
filelock does the locking, as it did before.

The lock is re-entrant and not per thread (filelock's `thread_local=False`): callers
serialise their threads with their own lock and may re-enter from whichever thread holds it.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from filelock import FileLock as LibraryLock

POLL_S = 0.05  # how often a waiting `acquire` tries again (filelock's default poll interval)
_CONTENTION = frozenset({errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK})
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)  # filelock's (no O_TRUNC)


class LockTimeout(TimeoutError):
    """Another process kept the lock for the whole wait."""

    def __init__(self, path: str) -> None:
        super().__init__(f"The file lock '{path}' could not be acquired.")
        self.path = path


class FileLock:
    """An exclusive, re-entrant lock on `path` (created if missing, never removed)."""

    def __init__(self, path: str | os.PathLike[str], timeout: float = -1) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout  # for `with`: seconds to wait, -1 for ever, 0 one try
        self._fd: int | None = None
        self._count = 0
        self._guard = threading.Lock()
        self._library: LibraryLock | None = _library_lock(self.path) if os.name == "nt" else None

    @property
    def is_locked(self) -> bool:
        """Held by this process."""
        return self._count > 0

    def acquire(self, timeout: float | None = None) -> None:
        """Take the lock (again, if this process holds it).

        Raises:
            LockTimeout: Another process held it for `timeout` seconds (`self.timeout` when None).
        """
        wait = self.timeout if timeout is None else timeout
        deadline = None if wait < 0 else time.monotonic() + wait
        while True:
            with self._guard:
                if self._count or self._try():
                    self._count += 1
                    return
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise LockTimeout(self.path)
            time.sleep(POLL_S if left is None else min(POLL_S, left))

    def release(self) -> None:
        """Let go once; the lock is free for other processes when every acquire was released."""
        with self._guard:
            if not self._count:
                return
            self._count -= 1
            if self._count:
                return
            if self._library is not None:
                self._library.release()
                return
            fd, self._fd = self._fd, None
            if fd is not None:
                _unlock(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _try(self) -> bool:
        """One attempt, without waiting: True when this process now holds the lock."""
        if self._library is not None:
            return _library_try(self._library)
        try:
            fd, created = _open(self.path)
        except FileNotFoundError:
            return False  # the file went between the create and the open: try again
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in _CONTENTION:
                return False
            if exc.errno != errno.ENOSYS:
                raise
            # No flock here: filelock falls back to a lock file of its own, whose presence is the lock,
            # so the file this attempt made goes first (one that was there may be another process's).
            if created:
                Path(self.path).unlink(missing_ok=True)
            self._library = _library_lock(self.path)
            return _library_try(self._library)
        if os.fstat(fd).st_nlink == 0:  # unlinked between the open and the lock: it guards no name
            _unlock(fd)
            return False
        self._fd = fd
        return True


def _open(path: str) -> tuple[int, bool]:
    """The lock file's descriptor and whether this call created the file; its folder is made when
    missing (as filelock does)."""
    try:
        return os.open(path, _OPEN_FLAGS | os.O_EXCL, 0o666), True
    except FileExistsError:
        return os.open(path, _OPEN_FLAGS, 0o666), False
    except FileNotFoundError:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, _OPEN_FLAGS | os.O_EXCL, 0o666), True


def _unlock(fd: int) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _library_lock(path: str) -> LibraryLock:
    from filelock import FileLock as Library

    return Library(path, thread_local=False)


def _library_try(lock: Any) -> bool:
    from filelock import Timeout

    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    return True
