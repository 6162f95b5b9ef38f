"""The parallel build's worker seen from this process (`core.index.worker_process`)."""

from __future__ import annotations

import pickle
from typing import Any

from core.base.spare_core import Started
from core.index.worker_process import WorkerProcess


class _Alive:
    """A worker process that stays alive (it waits for its next claim)."""

    def is_alive(self) -> bool:
        return True

    def kill(self) -> None:
        pass

    def join(self, timeout: float | None = None) -> None:
        pass


class _Unreadable:
    """A pipe whose first answer this process cannot unpickle (a worker on other code, a damaged message)."""

    def recv(self) -> Any:
        return pickle.loads(b"\x80\x05c__nowhere__\nmissing\n.")

    def send(self, obj: Any) -> None:
        pass


def test_an_answer_that_cannot_be_unpickled_reads_as_a_worker_gone_not_a_wait() -> None:
    """The reader thread used to die on it and leave the build waiting for the worker's hung-answer
    timeout (15 minutes); now the build is told at once, stops the worker and indexes its claims here."""
    worker = WorkerProcess(Started(_Alive(), _Unreadable(), primed=True), ())  # type: ignore[arg-type]
    assert worker.wait(5.0) is True
    assert worker.answer() is None
