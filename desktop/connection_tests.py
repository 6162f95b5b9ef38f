"""'Test connection' for the settings dialog: a worker per test, the result as a signal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Slot

from core.providers.embedding import default_registry
from desktop.services import check_embedder, check_llm, llm_providers
from desktop.workers import TaskWorker


class ConnectionTests:
    """Mixed into AppController, which provides `keys`, `_jobs` and `connectionTested`."""

    keys: Any
    _jobs: Any
    connectionTested: Any

    def test_embedder(self, provider: str, model: str, base_url: str, key: str | None = None) -> None:
        """Embed "test" with these settings on a worker; `connectionTested('embedding', ...)` follows."""
        if key is None:
            info = default_registry().get(provider)
            key = self.keys.get(info.id, info.key_env_var) if info is not None and info.needs_key else None
        self._run_test("embedding", lambda: check_embedder(provider, model, base_url, key))

    def test_llm(self, provider: str, base_url: str, key: str | None = None) -> None:
        info = llm_providers().get(provider)
        if key is None and info is not None and info.needs_key:
            key = self.keys.get(info.id, info.key_env_var)
        self._run_test("llm", lambda: check_llm(provider, base_url, key))

    def _run_test(self, kind: str, fn: Callable[[], str]) -> None:
        worker = TaskWorker(kind, fn)
        worker.finished.connect(self._on_test_ok)
        worker.failed.connect(self._on_test_failed)
        self._jobs.start(worker)

    @Slot(str, object)
    def _on_test_ok(self, kind: str, text: object) -> None:
        self.connectionTested.emit(kind, True, str(text))

    @Slot(str, str)
    def _on_test_failed(self, kind: str, text: str) -> None:
        self.connectionTested.emit(kind, False, text)
