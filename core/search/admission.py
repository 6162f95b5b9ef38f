"""Admission for searches: a bounded number run at once, the rest are told to retry."""

from __future__ import annotations

import threading

from core.base.errors import BusyError


class Admission:
    """Bounded concurrent searches: past the bound, a `BusyError` rather than a pile-up."""

    def __init__(self, limit: int) -> None:
        self._sem = threading.BoundedSemaphore(limit)

    def __enter__(self) -> None:
        if not self._sem.acquire(timeout=0.05):
            raise BusyError("Too many searches at once; try again in a moment", retry_after_seconds=0.2)

    def __exit__(self, *exc: object) -> None:
        self._sem.release()
