"""QObject workers that run engine calls on their own QThreads.

Workers talk only through signals and never touch a widget. Each one, when its
job is over, moves itself back to the thread that created it, so the GUI thread
can drop it safely once its thread has stopped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.base.errors import CairnError
from core.engine import Engine
from core.search.search import SearchRequest
from desktop.state import take_snapshot


def close_quietly(provider: Any) -> None:
    """Close a model client a worker made, if it can be closed; a failing close must not hide the result."""
    close = getattr(provider, "close", None)
    if callable(close):
        try:
            close()
        except Exception:
            logging.getLogger("cairn.desktop").debug("closing %r failed", provider, exc_info=True)


def user_message(exc: BaseException) -> str:
    """A sentence for the status bar: the engine's own wording for its errors, the type otherwise.

    An error that is not one of Cairn's own is unexpected: its traceback goes to the
    log file in the data folder (see `desktop.error_log`), the sentence to the user.
    """
    if isinstance(exc, CairnError):
        return str(exc)
    logging.getLogger("cairn.desktop").error("Unexpected error in a worker", exc_info=exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _HomingWorker(QObject):
    """A worker that returns to its creating thread when its job ends, then says `done`."""

    done = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._home = QThread.currentThread()

    def _go_home(self) -> None:
        self.moveToThread(self._home)
        self.done.emit()


class IndexWorker(_HomingWorker):
    """Syncs vaults one after another: keyword index first, then embeddings in batches.

    Signals:
        progress: (vault, done, total, phase) where phase is "keyword", "note vectors" (one short vector per note first) or "embedding".
        keywordReady: A vault's keyword index is written; search works on it now.
        failed: A vault could not be indexed; the message is for the user.
        finished: Every vault was tried; carries the list of `SyncReport`s.
    """

    progress = Signal(str, int, int, str)
    keywordReady = Signal(str)
    failed = Signal(str)
    finished = Signal(object)

    def __init__(self, engine: Engine, names: Sequence[str], cancel: threading.Event, *, embed: bool = True, keyword: bool = True) -> None:
        super().__init__()
        self._engine = engine
        self._names = list(names)
        self._cancel = cancel
        self._embed = embed
        self._keyword = keyword  # False: Resume a cancelled embedding, the keyword index left alone

    @Slot()
    def run(self) -> None:
        reports: list[Any] = []
        try:
            for name in self._names:
                if self._cancel.is_set():
                    break
                reports.extend(self._sync_one(name))
        finally:
            self.finished.emit(reports)
            self._go_home()

    def _sync_one(self, name: str) -> list[Any]:
        announced = False

        def on_keyword_ready(_: str) -> None:
            nonlocal announced
            announced = True
            self.keywordReady.emit(name)

        def on_progress(done: int, total: int, phase: str) -> None:
            self.progress.emit(name, done, total, phase)

        try:
            # A vault's first index is built in a child process: Whoosh would otherwise hold
            # the GIL (and so the window) for up to a few hundred ms at a time.
            reports = self._engine.sync(
                [name], progress=on_progress, cancel=self._cancel, embed=self._embed, bulk_in_child=True,
                keyword_ready=on_keyword_ready, keyword=self._keyword,
            )  # fmt: skip
        except Exception as exc:  # report, never kill the thread silently
            self.failed.emit(f"Indexing {name} failed: {user_message(exc)}")
            return []
        if not announced:
            self.keywordReady.emit(name)
        return reports


@dataclass(frozen=True, slots=True)
class SearchJob:
    """One search: the engine to ask (it may be replaced after a settings change) and the request."""

    engine: Engine
    request: SearchRequest


class QueryWorker(QObject):
    """Answers searches and status questions on one long-lived thread.

    Requests arrive queued, oldest first; one that is already older than the
    newest request (`latest()`) is skipped without searching, so fast typing
    does not build a backlog.
    """

    searchDone = Signal(int, object)
    searchFailed = Signal(int, str)
    snapshotReady = Signal(object)
    snapshotFailed = Signal()

    def __init__(self, latest: Callable[[], int]) -> None:
        super().__init__()
        self._latest = latest
        self._warmed = False

    @Slot(int, object)
    def search(self, seq: int, job: SearchJob) -> None:
        if seq < self._latest():
            return
        try:
            response = job.engine.search(job.request)
        except Exception as exc:
            self.searchFailed.emit(seq, user_message(exc))
        else:
            self.searchDone.emit(seq, response)

    @Slot(object)
    def snapshot(self, engine: Engine) -> None:
        try:
            snap = take_snapshot(engine)
        except Exception:  # a vault mid-rebuild; the next refresh will catch up
            self.snapshotFailed.emit()
            return
        self.snapshotReady.emit(snap)
        if not self._warmed:  # after the first snapshot is shown: the first search then starts warm
            self._warmed = True
            engine.warm_up()


class TaskWorker(_HomingWorker):
    """Runs one plain function (a connection test) and reports its result or error message."""

    finished = Signal(str, object)  # tag, result
    failed = Signal(str, str)  # tag, message

    def __init__(self, tag: str, fn: Callable[[], Any]) -> None:
        super().__init__()
        self._tag = tag
        self._fn = fn

    @Slot()
    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:
            self.failed.emit(self._tag, user_message(exc))
        else:
            self.finished.emit(self._tag, result)
        finally:
            self._go_home()


class JobRunner(QObject):
    """Starts one-shot workers on fresh QThreads and keeps them alive until their thread ends."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._jobs: dict[QThread, _HomingWorker] = {}

    def start(self, worker: _HomingWorker) -> QThread:
        thread = QThread()
        thread.setObjectName(type(worker).__name__)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)  # type: ignore[attr-defined]
        worker.done.connect(thread.quit)
        thread.finished.connect(self._forget)
        self._jobs[thread] = worker
        thread.start()
        return thread

    @Slot()
    def _forget(self) -> None:
        for thread in [t for t in self._jobs if t.isFinished()]:
            self._jobs.pop(thread, None)

    def wait_all(self, msecs: int = 30000) -> None:
        for thread in list(self._jobs):
            thread.quit()
            thread.wait(msecs)
        self._jobs.clear()
