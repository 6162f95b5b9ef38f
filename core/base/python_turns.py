"""Background threads take turns at running Python, so the UI thread is not starved of the GIL.

CPython's GIL (3.11, `Python/ceval_gil.h`): a thread that wants it waits one switch interval and
asks the holder to drop it only if no *other* thread took it in the meantime; and every time a
holder lets go for a moment (a small `zlib.decompress`, a `stat`, a short read) it wakes a waiter,
which starts its interval again. Two background threads that both run Python and let go often
hand the GIL to each other many times a millisecond, and the app's UI thread, waiting beside
them, never gets to ask: a convoy. Measured on the 2-core VM (`docs/benchmarks.md`, "Many
agents on one server"): a thread ticking every 10 ms beside two such threads was late by
150-210 ms at worst, beside one by 4-6 ms; in the agents server, the two tool workers reading
Whoosh's stored fields (zlib) and phrase-scanning notes made stalls of 70-240 ms during which
the UI thread was runnable for little of it. A shorter switch interval did not help (0.2 ms:
180-280 ms). One thread alone can still starve it when it lets go every ~0.1-0.5 ms, less often.

So threads that run much Python in the background take a turn, one at a time, and give it up
around calls that run outside the GIL anyway (model inference), where two of them still overlap:
the agents server's tool workers for a whole call, an embedding thread for the Python around each
batch. A thread holding the turn gives it up while it waits for another thread that may need it. And
since one thread alone can starve the UI thread too, a holder in a loop that lets the GIL go for
a moment per step (Whoosh's stored fields) calls `breathe()`: a real pause every few ms.
The turn is a courtesy, not a lock: a thread that waited `patience` seconds goes ahead without it
(and logs where the holder was), so two threads waiting on each other are delayed, never stuck.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from core.base.logs import logger

SHARE_S = 0.008  # a turn holder in a loop that calls `breathe()` lets the GIL go after this long ...
PAUSE_S = 0.0005  # ... for this long: the waiting UI thread wakes and takes it (~6 % of the loop's time)
PATIENCE_S = 5.0  # longer than a slow tool's Python (a vault-wide scan: ~1-2.5 s); only a safety net


@dataclass
class TurnStats:
    """How often turns were taken and how often a thread gave up waiting (for benchmarks and tests)."""

    taken: int = 0
    impatient: int = 0
    pauses: int = 0  # times a holder let the GIL go in `breathe()`
    last_impatient: str = ""  # where the holder was when a thread last went ahead without the turn


class PythonTurns:
    """One turn at running Python, shared by the threads that ask for it.

    `turn()` holds it for a block (re-entrant within a thread); `released()` gives it up for a
    block that runs outside the GIL (a no-op in a thread that does not hold it), then takes it back.
    """

    def __init__(self, patience: float = PATIENCE_S) -> None:
        self.patience = patience
        self.stats = TurnStats()
        self._lock = threading.Lock()
        self._mine = threading.local()  # depth: nested turns; owned: holds the lock; since: last let the GIL go
        self.share_s = SHARE_S
        self.pause_s = PAUSE_S
        self._holder = 0  # thread ident of the holder, for the report when someone runs out of patience

    @contextmanager
    def turn(self) -> Iterator[None]:
        depth = getattr(self._mine, "depth", 0)
        if depth == 0:
            self._take()
        self._mine.depth = depth + 1
        try:
            yield
        finally:
            self._mine.depth = depth
            if depth == 0:
                self._give()

    @contextmanager
    def released(self) -> Iterator[None]:
        if not getattr(self._mine, "depth", 0):
            yield
            return
        self._give()
        try:
            yield
        finally:
            self._take()

    def breathe(self) -> None:
        """In a loop that lets the GIL go for a moment per step (a stored field's zlib): after `share_s`
        holding the turn, let it go for `pause_s`.

        One thread alone still starves the UI thread when it lets the GIL go every ~0.1-0.5 ms: each
        hand-back wakes the waiting thread too late to take it and restarts its wait (measured: a
        ticking thread 960 ms late beside one such loop). A real pause, long enough for the woken
        thread to take the GIL, bounds the wait. Cheap outside a turn and between pauses.
        """
        if not getattr(self._mine, "owned", False):
            return
        now = time.perf_counter()
        if now - self._mine.since >= self.share_s:
            time.sleep(self.pause_s)
            self._mine.since = time.perf_counter()
            self.stats.pauses += 1

    def holds_turn(self) -> bool:
        """Whether this thread is inside `turn()` (and not inside `released()`)."""
        return bool(getattr(self._mine, "owned", False))

    def _take(self) -> None:
        owned = self._lock.acquire(timeout=self.patience)
        self._mine.owned = owned
        if owned:
            self.stats.taken += 1
            self._holder = threading.get_ident()
            self._mine.since = time.perf_counter()
        else:
            self.stats.impatient += 1
            self.stats.last_impatient = _stack_of(self._holder)
            logger(__name__).warning(
                "went ahead without the Python turn after %.1f s; its holder was at:\n%s",
                self.patience,
                self.stats.last_impatient,
            )

    def _give(self) -> None:
        if getattr(self._mine, "owned", False):
            self._mine.owned = False
            self._holder = 0
            self._lock.release()


def _stack_of(ident: int) -> str:
    import traceback  # only when a thread gave up waiting: not on every search

    frame = sys._current_frames().get(ident)
    return "".join(traceback.format_stack(frame, limit=12)) if frame is not None else "(no holder)"


_TURNS = PythonTurns()


def python_turns() -> PythonTurns:
    """The process's turns: the agents server's tool workers take them, model inference gives them up."""
    return _TURNS
