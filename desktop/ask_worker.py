"""Asking questions of the notes off the GUI thread: one `AskWorker` per question, one question at a time.

`AskRunner` lives on the GUI thread. It starts each `AskWorker` on a fresh
QThread, relays the worker's signals (queued, so every slot of a view runs on
the GUI thread) and drops whatever a superseded worker still sends: asking
again cancels the running question, and only the newest one is ever shown.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from core.answer import Answerer, AskRequest, Turn
from core.engine import Engine
from core.providers.llm import ChatProvider, LLMError
from desktop.settings import Settings
from desktop.workers import JobRunner, _HomingWorker, close_quietly, user_message

#: Builds the chat model for one question from the settings; None means the offline extractive answer.
ProviderFactory = Callable[[Settings], ChatProvider | None]

#: The Language model page counts the context budget in characters; the core counts tokens (~4 characters).
CHARS_PER_TOKEN = 4
MIN_BUDGET_TOKENS = 200


def budget_tokens(settings: Settings) -> int:
    return max(MIN_BUDGET_TOKENS, settings.llm_context_chars // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class AskJob:
    """Everything one question needs, fixed when it is asked (settings may change meanwhile)."""

    engine: Engine
    request: AskRequest
    settings: Settings
    provider_factory: ProviderFactory


class AskWorker(_HomingWorker):
    """Answers one question: builds the chat model, retrieves, streams, checks citations.

    Signals:
        delta: A piece of the answer's text, as the model sends it.
        finished: The `AskResponse` (also after Stop: then marked incomplete).
        failed: A message for the user: the model could not be set up, or the engine failed.
    """

    delta = Signal(str)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, job: AskJob, cancel: threading.Event) -> None:
        super().__init__()
        self._job = job
        self._cancel = cancel

    @Slot()
    def run(self) -> None:
        provider: Any = None
        try:
            provider = self._job.provider_factory(self._job.settings)
            settings = self._job.settings
            answerer = Answerer(self._job.engine, provider, temperature=settings.llm_temperature, route_folders=settings.route_folders)
            response = answerer.ask(self._job.request, on_delta=self.delta.emit, cancel=self._cancel)
        except LLMError as exc:  # its message names the server and the model already
            self.failed.emit(exc.message)
        except Exception as exc:  # report, never kill the thread silently
            self.failed.emit(user_message(exc))
        else:
            self.finished.emit(response)
        finally:
            close_quietly(provider)
            self._go_home()


class AskRunner(QObject):
    """Runs one question at a time and relays the newest one's signals on the GUI thread.

    Args:
        engine: Returns the engine to ask (the controller replaces it after a settings change).
        settings: Returns the app's current settings.
        provider_factory: Builds the chat model from the settings.
        parent: Qt parent.

    Signals:
        started: An `AskRequest` was sent to a worker.
        delta: A piece of the newest answer.
        finished: The newest question's `AskResponse`.
        failed: The newest question could not be answered; a message for the user.
        busyChanged: Whether a question is being answered.
    """

    started = Signal(object)
    delta = Signal(str)
    finished = Signal(object)
    failed = Signal(str)
    busyChanged = Signal(bool)

    def __init__(
        self,
        engine: Callable[[], Engine],
        settings: Callable[[], Settings],
        provider_factory: ProviderFactory,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._settings = settings
        self.provider_factory = provider_factory
        self._jobs = JobRunner(self)
        self._current: AskWorker | None = None
        self._cancel = threading.Event()
        self._shut = False

    def is_busy(self) -> bool:
        return self._current is not None

    def ask(
        self,
        question: str,
        *,
        detail: str = "normal",
        vaults: tuple[str, ...] = (),
        folders: tuple[str, ...] = (),
        path_prefixes: tuple[str, ...] = (),
        history: tuple[Turn, ...] = (),
    ) -> AskRequest | None:
        """Start answering `question`, cancelling any question still running; None if there is nothing to ask."""
        question = question.strip()
        if not question or self._shut:
            return None
        self._cancel.set()  # the previous worker stops at its next chunk; its signals are ignored from now on
        settings = self._settings()
        request = AskRequest(
            question,
            vaults=vaults,
            folders=folders,
            path_prefixes=path_prefixes,
            detail=detail,
            mode=settings.default_mode,
            context_budget_tokens=budget_tokens(settings),
            history=history,
        )
        self._cancel = threading.Event()
        worker = AskWorker(AskJob(self._engine(), request, settings, self.provider_factory), self._cancel)
        worker.delta.connect(self._on_delta)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        was_busy = self._current is not None
        self._current = worker
        self._jobs.start(worker)
        self.started.emit(request)
        if not was_busy:
            self.busyChanged.emit(True)
        return request

    def stop(self) -> None:
        """Ask the running question to stop; its partial answer still arrives through `finished`."""
        self._cancel.set()

    def shutdown(self, msecs: int = 30000) -> None:
        """Cancel the running question and wait for its thread; safe to call twice."""
        self._shut = True
        self._cancel.set()
        self._jobs.wait_all(msecs)
        self._current = None

    def _is_current(self) -> bool:
        return self._current is not None and self.sender() is self._current

    @Slot(str)
    def _on_delta(self, text: str) -> None:
        if self._is_current():
            self.delta.emit(text)

    @Slot(object)
    def _on_finished(self, response: object) -> None:
        if self._is_current():
            self._current = None
            self.finished.emit(response)
            self.busyChanged.emit(False)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._is_current():
            self._current = None
            self.failed.emit(message)
            self.busyChanged.emit(False)
