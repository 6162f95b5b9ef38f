"""The opt-in LLM rerank of search results, off the GUI thread (see `core.answer.rerank`).

The fused results are shown first; `RerankRunner` then sends the top 10 to the
user's language model and relays the new order when it arrives. A newer
search cancels the running rerank and its late result is dropped, so the list
never jumps to the order of an older query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from core.answer.rerank import RerankResult, RerankStatus, rerank
from core.base.models import SearchResponse
from desktop.ask_worker import ProviderFactory
from desktop.settings import Settings
from desktop.workers import JobRunner, _HomingWorker, close_quietly, user_message


def rerank_wanted(settings: Settings, response: SearchResponse) -> bool:
    """Whether to rerank this response: the user opted in, a model is set, there is an order to change."""
    return settings.llm_rerank and (settings.llm_provider or "none") != "none" and len(response.hits) > 1 and bool(response.query.strip())


@dataclass(frozen=True, slots=True)
class RerankJob:
    seq: int  # the search this reorders
    response: SearchResponse
    settings: Settings
    provider_factory: ProviderFactory


class RerankWorker(_HomingWorker):
    """Reranks one response. Signals: finished(seq, RerankResult), failed(seq, message)."""

    finished = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, job: RerankJob, cancel: threading.Event) -> None:
        super().__init__()
        self._job = job
        self._cancel = cancel

    @Slot()
    def run(self) -> None:
        provider: Any = None
        try:
            provider = self._job.provider_factory(self._job.settings)
            if provider is None:
                raise RuntimeError("no language model is set")
            result = rerank(self._job.response.query, self._job.response.hits, provider, cancel=self._cancel)
        except Exception as exc:  # report, never kill the thread silently
            self.failed.emit(self._job.seq, f"LLM rerank failed ({user_message(exc)}); showing the fused order")
        else:
            self.finished.emit(self._job.seq, result)
        finally:
            close_quietly(provider)
            self._go_home()


class RerankRunner(QObject):
    """Reranks the newest search's results; relays its result on the GUI thread.

    Signals:
        reranked: (seq, the response with the new order and a note in its warnings).
        failed: (seq, a message: the fused order stays).
    """

    reranked = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self, settings: Callable[[], Settings], provider_factory: ProviderFactory, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.provider_factory = provider_factory
        self._jobs = JobRunner(self)
        self._cancel = threading.Event()
        self._seq = -1
        self._responses: dict[int, SearchResponse] = {}

    def cancel(self) -> None:
        """Stop the running rerank (a new query came); whatever it still sends is dropped."""
        self._cancel.set()
        self._seq = -1

    def start(self, seq: int, response: SearchResponse) -> bool:
        """Rerank `response` when the user wants it; False when not."""
        self.cancel()
        settings = self._settings()
        if not rerank_wanted(settings, response):
            return False
        self._cancel = threading.Event()
        self._seq = seq
        self._responses = {seq: response}
        worker = RerankWorker(RerankJob(seq, response, settings, self.provider_factory), self._cancel)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        self._jobs.start(worker)
        return True

    def shutdown(self, msecs: int = 30000) -> None:
        self.cancel()
        self._jobs.wait_all(msecs)

    @Slot(int, object)
    def _on_finished(self, seq: int, result: RerankResult) -> None:
        response = self._responses.pop(seq, None)
        if seq != self._seq or response is None:
            return
        self._seq = -1
        if result.status == RerankStatus.RERANKED:
            self.reranked.emit(seq, _with(response, result))
        elif result.status != RerankStatus.CANCELLED:
            self.failed.emit(seq, result.message)

    @Slot(int, str)
    def _on_failed(self, seq: int, message: str) -> None:
        if seq == self._seq:
            self._seq = -1
            self.failed.emit(seq, message)


def _with(response: SearchResponse, result: RerankResult) -> SearchResponse:
    return replace(response, hits=result.hits, timings_ms=dict(response.timings_ms, llm_rerank=result.ms))
