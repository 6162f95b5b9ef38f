"""One writer per vault's index across processes.

The app, `cairn index`, `cairn watch` and `cairn mcp` may run at once on one data
folder. Each holds this lock while it writes a vault's index (a sync, a live update,
a flush, a reset), so a process that opens the index while another builds it never
mistakes the half-built index for a missing one and starts an empty one over it.
Threads of one process are already serialised by the caller's own lock, so the
file lock is not thread-local: a `VaultIndex` re-enters it from whichever thread
holds its `threading.RLock`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from core.base.errors import IndexBusyError

if TYPE_CHECKING:
    from filelock import FileLock

BUSY_STATE = "being indexed by another Cairn process"
OPEN_WAIT_S = 1.0  # opening (and resetting) an index: a reader must not hang on a first index elsewhere
LIVE_WAIT_S = 2.0  # a live update or a flush: the watcher defers and retries
SYNC_WAIT_S = 30.0  # a full sync waits out another process's live update, not its whole first index


class VaultLock:
    """The lock file `write.lock` in a vault's index folder."""

    def __init__(self, vault_dir: Path) -> None:
        self.path = vault_dir / "write.lock"
        self._file_lock: FileLock | None = None
        self._made = threading.Lock()

    @property
    def _lock(self) -> FileLock:
        """The file lock, made on first use: a search that only opens the index never imports filelock
        (~10 ms of a cold `cairn search`)."""
        if self._file_lock is None:
            from filelock import FileLock

            with self._made:
                if self._file_lock is None:
                    self._file_lock = FileLock(str(self.path), thread_local=False)
        return self._file_lock

    @contextmanager
    def held(self, timeout: float) -> Iterator[None]:
        """Hold the lock for a write; IndexBusyError when another process keeps it `timeout` seconds."""
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=timeout)
        except Timeout as exc:
            raise IndexBusyError(f"{self.path.parent.name}: {BUSY_STATE}; try again when it has finished") from exc
        try:
            yield
        finally:
            self._lock.release()

    def free(self) -> bool:
        """Whether no other process writes now (taken and released at once; never waits)."""
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            return False
        self._lock.release()
        return True

    @property
    def is_held(self) -> bool:
        """Held by this process (a write in progress here)."""
        return self._file_lock is not None and self._file_lock.is_locked
