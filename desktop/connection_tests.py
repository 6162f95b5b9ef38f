"""'Test connection' for the settings dialog: a worker per test, the result as a signal."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from core.providers.embedding import default_registry
from core.providers.secrets import KeyStore
from desktop.services import check_embedder, check_llm, llm_providers
from desktop.workers import JobRunner, TaskWorker


class ConnectionTester(QObject):
    """Runs connection tests on worker threads.

    Signals:
        tested: kind ('embedding' or 'llm'), whether it worked, and the message to show.
    """

    tested = Signal(str, bool, str)

    def __init__(self, keys: KeyStore, jobs: JobRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._keys = keys
        self._jobs = jobs

    def test_embedder(self, provider: str, model: str, base_url: str, key: str | None = None) -> None:
        """Embed "test" with these settings on a worker; `tested('embedding', ...)` follows."""
        if key is None:
            info = default_registry().get(provider)
            key = self._keys.get(info.id, info.key_env_var) if info is not None and info.needs_key else None
        self._run("embedding", lambda: check_embedder(provider, model, base_url, key))

    def test_llm(self, provider: str, base_url: str, key: str | None = None) -> None:
        info = llm_providers().get(provider)
        if key is None and info is not None and info.needs_key:
            key = self._keys.get(info.id, info.key_env_var)
        self._run("llm", lambda: check_llm(provider, base_url, key))

    def _run(self, kind: str, fn: Callable[[], str]) -> None:
        worker = TaskWorker(kind, fn)
        worker.finished.connect(self._on_ok)
        worker.failed.connect(self._on_failed)
        self._jobs.start(worker)

    @Slot(str, object)
    def _on_ok(self, kind: str, text: object) -> None:
        self.tested.emit(kind, True, str(text))

    @Slot(str, str)
    def _on_failed(self, kind: str, text: str) -> None:
        self.tested.emit(kind, False, text)
