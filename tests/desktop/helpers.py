"""Helpers shared by the desktop tests: a fake embedder, an action recorder, wait-for-index and search."""

from __future__ import annotations

import atexit
import hashlib
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.base.paths import AppPaths
from core.engine import Engine
from desktop.actions import HitActions
from desktop.controller import AppController
from desktop.main_window import MainWindow

SAMPLE_VAULT = (Path(__file__).resolve().parents[2] / "resources" / "sample-vault").resolve()


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


# The sample vault's first keyword index, built once per test session in-process and copied
# into each test's data folder: a first index runs in a child process (~5 s a test on this
# machine). The app's indexing path still runs on the copy (an in-process incremental sync that
# finds every note unchanged); the first build in a child process is tested where it matters
# (test_indexing, test_live and tests/core/index/test_child_sync.py use fresh copies of vaults).
_PREBUILT: dict[Path, Path] = {}


def _prebuilt_index(root: Path) -> Path:
    """A data folder holding a keyword index of `root`, built on first use."""
    home = _PREBUILT.get(root)
    if home is None:
        home = Path(tempfile.mkdtemp(prefix="cairn-prebuilt-"))
        atexit.register(shutil.rmtree, home, True)
        engine = Engine(AppPaths(home), embedder_factory=None)
        try:
            engine.add_vault(root)
            engine.sync(embed=False)
        finally:
            engine.close()
        _PREBUILT[root] = home
    return home


def index_vault(qtbot: Any, controller: AppController, root: Path, timeout_ms: int = 15000, *, prebuilt: bool | None = None) -> None:
    """Add a vault and wait until indexing finished and a snapshot taken after it arrived.

    `prebuilt` (default: for the read-only sample vault) starts from a copy of a keyword index
    built once per session, so the app syncs an index that is already up to date.
    """
    if prebuilt if prebuilt is not None else root.resolve() == SAMPLE_VAULT:
        source = AppPaths(_prebuilt_index(root.resolve()))
        name = root.resolve().name
        target = controller.engine.paths.vault_dir(name)
        if controller.engine.config.vault_named(name) is None and not target.exists():
            shutil.copytree(source.vault_dir(name), target)
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


def text_picture(path: Path, lines: Sequence[str], size: tuple[int, int], first_baseline: int = 80, spacing: int = 90) -> Path:
    """A PNG of black 40-px lines on white, drawn with Qt (no Pillow needed): something for OCR to read."""
    from PySide6.QtGui import QColor, QFont, QImage, QPainter

    image = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setPen(QColor("black"))
    font = QFont("DejaVu Sans")
    font.setPixelSize(40)
    painter.setFont(font)
    for i, line in enumerate(lines):
        painter.drawText(20, first_baseline + spacing * i, line)
    painter.end()
    assert image.save(str(path))
    return path
