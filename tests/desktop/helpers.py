"""Helpers shared by the desktop tests: a fake embedder, an action recorder, wait-for-index and search."""

from __future__ import annotations

import hashlib
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from desktop.actions import HitActions
from desktop.controller import AppController
from desktop.main_window import MainWindow


class FakeEmbedder:
    """Deterministic vectors from word hashes; `delay` seconds per call so indexing can be cancelled mid-way."""

    model_id = "fake-words"
    model_hash = "fake-words-v1"
    dims = 32
    max_tokens = 256

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dims, dtype=np.float32)
        for word in text.lower().split():
            v[int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_documents(self, texts: Sequence[str], progress: Any = None, cancel: threading.Event | None = None) -> np.ndarray:
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        return np.vstack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


class Recorder:
    """Stands in for the desktop: records opened URLs, started programs and clipboard text."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.runs: list[list[str]] = []
        self.clipboard: list[str] = []
        self.started: list[list[str]] = []
        self.start_ok = True  # whether a started editor "launches"

    def actions(self) -> HitActions:
        return HitActions(
            open_url=lambda url: self.urls.append(bytes(url.toEncoded().data()).decode()),
            run=self.runs.append,
            set_clipboard=self.clipboard.append,
            start_detached=self._start,
        )

    def _start(self, argv: list[str]) -> bool:
        self.started.append(argv)
        return self.start_ok


def index_vault(qtbot: Any, controller: AppController, root: Path, timeout_ms: int = 15000) -> None:
    """Add a vault and wait until indexing finished and a snapshot taken after it arrived."""
    finished: list[Any] = []
    fresh: list[Any] = []
    controller.indexFinished.connect(finished.append)
    controller.snapshotChanged.connect(lambda snap: fresh.append(snap) if finished else None)
    assert controller.add_vault(root) is not None
    qtbot.waitUntil(lambda: bool(finished and fresh), timeout=timeout_ms)


def copy_folders(src: Path, dest: Path, folders: Sequence[str]) -> Path:
    """A smaller vault made of some folders of the sample vault (for the real-embedder test)."""
    for folder in folders:
        shutil.copytree(src / folder, dest / folder)
    return dest


def search_and_wait(qtbot: Any, window: MainWindow, text: str, timeout_ms: int = 5000) -> None:
    """Type `text` into the query box and wait until the results for exactly this text are shown."""
    controller = window.controller
    window.search_bar.query.setFocus()
    window.search_bar.query.clear()
    qtbot.keyClicks(window.search_bar.query, text)
    qtbot.waitUntil(lambda: controller.response is not None and controller.response.query == text, timeout=timeout_ms)
