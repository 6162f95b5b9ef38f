"""Per-thread Whoosh searchers, lent out for one read at a time so that closing never pulls
one from under a search.

Each thread reads through a searcher of its own: the index is read from its files, and
Whoosh reads some of them with seek + read on one file object, so a searcher shared by two
threads would hand each the other's bytes. A search borrows its thread's searcher for as long
as it reads (`reading()`); `close()` closes the searchers nobody is reading through and
retires the others, which their reader closes when it is done. Nothing is poisoned: the next
read opens a fresh searcher. So the engine may close an index (a vault removed, config
reloaded, the first index rebuilt in a child) while its query thread is in the middle of a
search on it, and close it twice.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any


class _Lease:
    """One searcher and who reads through it."""

    __slots__ = ("__weakref__", "closed", "readers", "retired", "searcher")

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        self.readers = 1  # the read that opened it
        self.retired = False  # closed once `readers` drops to 0; never lent again
        self.closed = False


class Searchers:
    """The searchers of one index: one per thread, reopened when the index has changed."""

    def __init__(self, open_searcher: Callable[[], Any]) -> None:
        self._open_searcher = open_searcher
        self._lock = threading.Lock()
        self._local = threading.local()
        self._leases: weakref.WeakSet[_Lease] = weakref.WeakSet()

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """This thread's searcher, up to date, kept open until the block ends (nesting is fine)."""
        lease = self._take()
        try:
            yield lease.searcher
        finally:
            self._give_back(lease)

    def _take(self) -> _Lease:
        with self._lock:
            lease: _Lease | None = getattr(self._local, "lease", None)
            if lease is not None and not lease.retired:
                lease.readers += 1
            else:
                lease = None
        if lease is not None:
            if lease.searcher.up_to_date():
                return lease
            self._retire(lease)  # the index changed: closed once a read further up this stack is done
            self._give_back(lease)
        lease = _Lease(self._open_searcher())
        with self._lock:
            self._leases.add(lease)
            self._local.lease = lease
        return lease

    def _retire(self, lease: _Lease) -> None:
        """Never lend `lease` again; close it now if nobody reads through it."""
        with self._lock:
            lease.retired = True
            done = _closing(lease)
        if done:
            _close(lease.searcher)

    def _give_back(self, lease: _Lease) -> None:
        with self._lock:
            lease.readers -= 1
            done = _closing(lease)
        if done:
            _close(lease.searcher)

    def forget_mine(self) -> None:
        """This thread reopens on its next read (after its own write, which `up_to_date` may miss)."""
        lease: _Lease | None = getattr(self._local, "lease", None)
        self._local.lease = None
        if lease is not None:
            self._retire(lease)

    def close(self) -> None:
        """Close every searcher: now where none is reading, when its read ends where one is."""
        with self._lock:
            leases = list(self._leases)
        for lease in leases:
            self._retire(lease)

    def open_searchers(self) -> list[Any]:
        """The searchers not closed yet (for tests and diagnostics)."""
        with self._lock:
            return [lease.searcher for lease in self._leases if not lease.closed]


def _closing(lease: _Lease) -> bool:
    """Whether `lease` is to be closed now (called under the lock; marks it so it is closed once)."""
    if lease.retired and lease.readers == 0 and not lease.closed:
        lease.closed = True
        return True
    return False


def _close(searcher: Any) -> None:
    with suppress(Exception):  # a searcher Whoosh closed already: nothing left to release
        searcher.close()
