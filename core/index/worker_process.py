"""The parallel build's worker as this process sees it: a child with its own pipe, given claim
numbers and answering each (`core.index.segment_worker.serve` runs on the other end).

Split from `core.index.parallel_build`, which decides what the worker is given and takes its
answers in.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, cast

from core.base.lean_import import imports_no_stand_in
from core.base.spare_core import Started

GONE_DRAIN_S = 0.5  # how long answers of a worker that just ended may take to be read


class WorkerProcess:
    """The worker: a started process with its own pipe, given claim numbers and answering each.

    A plain process rather than a pool: `multiprocessing.Pool` never fails a task whose worker
    was killed (out of memory, a segfault, a user's kill), so the indexer waited for it for
    15 minutes; here the process's end says at once that it is gone. The process may have
    been started before its claims were known (`core.base.spare_core.prestart`): the claims travel
    once, as its first message, sent by a thread of its own (no send waits here for a worker still
    starting), unless the worker was forked holding them (`Started.primed`); once it is through, claim numbers are sent by whichever thread hands them out (the
    reader's, the moment an answer comes: one wait for the GIL, not two). Answers are read by
    another thread as they come.
    """

    def __init__(self, started: Started, setup: tuple[Any, ...]) -> None:
        self._process = started.process
        self._conn = started.conn
        self._started = started
        self.on_answer: Callable[[tuple[Any, ...]], None] | None = None  # called by the reader thread with each answer
        self._send_lock = threading.Lock()
        self._waiting: list[int] | None = None if started.primed else []  # claims asked for before the setup went through
        # A claim's answer (its parsed notes) is megabytes, and a worker whose answer waits in
        # the pipe until this process finishes its own claim sits idle all that while.
        self._answers: queue.Queue[tuple[Any, ...] | None] = queue.Queue()
        self._head: list[tuple[Any, ...] | None] = []
        # Neither thread imports a module a lean import stands in for (they pickle, unpickle and hand out claims):
        # without saying so, this process imported all fourteen Snowball stemmers after the fork (~2.2 ms, not ~0.6).
        if not started.primed:  # a forked worker holds its setup already
            imports_no_stand_in(threading.Thread(target=self._send_setup, args=(setup,), daemon=True, name="cairn-segment-jobs")).start()
        imports_no_stand_in(threading.Thread(target=self._read, daemon=True, name="cairn-segment-answers")).start()

    def _send_setup(self, setup: tuple[Any, ...]) -> None:
        try:
            self._conn.send(setup)
            with self._send_lock:
                waiting, self._waiting = self._waiting or [], None
                for claim in waiting:
                    self._conn.send(claim)
        except (OSError, ValueError):
            return  # the worker is gone (or stopped): found by the next wait

    def _read(self) -> None:
        while True:
            try:
                got = cast("tuple[Any, ...]", self._conn.recv())
            except (EOFError, OSError):
                self._answers.put(None)  # the worker is gone (or stopped)
                return
            except Exception:  # an answer this process cannot unpickle: as if the worker were gone, not a 15-min wait
                self._answers.put(None)
                return
            if self.on_answer is not None:
                self.on_answer(got)  # the next claim goes out before this answer is taken in
            self._answers.put(got)

    def submit(self, claim: int) -> None:
        """Ask for `claim` (answers come back in the order asked)."""
        with self._send_lock:
            if self._waiting is not None:
                self._waiting.append(claim)
                return
            try:
                self._conn.send(claim)
            except (OSError, ValueError):
                return  # the worker is gone: found by the next wait

    def wait(self, timeout: float) -> bool:
        """Whether an answer is there, or the worker is gone, within `timeout` seconds."""
        if self._head:
            return True
        try:
            self._head.append(self._answers.get(timeout=timeout) if timeout > 0 else self._answers.get_nowait())
        except queue.Empty:
            return not self._process.is_alive()
        return True

    def answer(self) -> tuple[Any, ...] | None:
        """The next answer, or None: the worker is gone."""
        if self._head:
            return self._head.pop()
        try:  # a worker that just ended may still have answers on their way through the reader
            return self._answers.get(timeout=GONE_DRAIN_S)
        except queue.Empty:
            return None

    def kill(self) -> None:
        """End the worker now, also mid-claim, without waiting for it to be gone (`stop` waits)."""
        self._process.kill()

    def stop(self) -> None:
        """End the worker now, also mid-claim, and wait for it to be gone."""
        self._started.stop()
