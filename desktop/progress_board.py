"""Each vault's `VaultProgress`, kept up to date on the GUI thread: the one thing views read.

The status bar, Index health and the tree read the same object, so they cannot
disagree: the stored state comes from the latest snapshot, the phase and counts
from the running index job, the live state from the watcher.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Signal

from core.base.eta import RateMeter
from core.base.vault_state import LiveState, Phase, SemanticState, VaultProgress
from core.index.note_vectors import NOTE_PHASE
from desktop.state import VaultSnapshot

# The first embedding pass (one short vector per note, `core.index.note_vectors`) is embedding
# too; its rate (notes a second) is measured apart from the passages' by its own meter.
_PHASES = {"keyword": Phase.KEYWORD, "embedding": Phase.EMBEDDING, NOTE_PHASE: Phase.EMBEDDING, "ocr": Phase.OCR}


class ProgressBoard(QObject):
    """Signals:
    changed: A dict of vault name to `VaultProgress`, after any of them changed.
    """

    changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stored: dict[str, VaultProgress] = {}
        self._running: dict[str, VaultProgress] = {}  # vaults an index job is working on now
        self._queued: dict[str, None] = {}  # ordered: the first is being scanned
        self._watched: set[str] = set()
        self._caught_up: set[str] = set()
        self._paused: dict[str, bool] = {}  # cancelled part-way → keyword index complete? Resume finishes it
        self._ocr_paused: dict[str, tuple[int, int]] = {}  # OCR cancelled part-way → (files read, files) then
        self._failed: dict[str, str] = {}  # vault → why its last index job failed
        self._meters: dict[tuple[str, str], RateMeter] = {}  # (vault, phase) → its measured rate
        self.clock: Callable[[], float] = time.monotonic  # tests step it
        self.live_problem = ""  # the watcher's last error, until it reports progress again
        self._refresh: Callable[[], None] = lambda: None  # asks for a fresh snapshot (the controller's)

    @property
    def paused(self) -> tuple[str, ...]:
        """Vaults whose indexing was cancelled part-way, in the order they were added."""
        return tuple(n for n in self._stored if n in self._paused or n in self._ocr_paused)

    def follow(self, controller: Any) -> None:
        """Take the controller's snapshots and every index job's news (its signals of those names)."""
        controller.snapshotChanged.connect(self.set_snapshot)
        self._refresh = controller.refresh
        controller.indexStarted.connect(self.started)
        controller.indexProgress.connect(self.progress)
        controller.indexFinished.connect(self.finished)
        controller.indexFailed.connect(self.failed)

    def resume(self, index: Callable[..., None]) -> None:
        """Run the resume plan with `index(names, keyword=...)` (the controller's)."""
        for names, keyword in self.resume_plan():
            index(names, keyword=keyword)

    def resume_plan(self) -> list[tuple[list[str], bool]]:
        """What Resume runs: (vaults, read notes?) — embeddings only where every note was read."""
        # OCR is the sync's last stage, after embedding: a run that leaves the notes alone reaches it
        embed_only = [n for n in self.paused if self._paused.get(n, True)]
        rest = [n for n in self.paused if not self._paused.get(n, True)]  # cancelled while reading notes: read the rest
        return [(names, keyword) for names, keyword in ((embed_only, False), (rest, True)) if names]

    def get(self, name: str) -> VaultProgress | None:
        return self.all().get(name)

    def all(self) -> dict[str, VaultProgress]:
        out: dict[str, VaultProgress] = {}
        for name, stored in self._stored.items():
            p = self._running.get(name, stored)
            if name not in self._running:
                if name in self._queued:
                    p = replace(p, phase=Phase.SCANNING if self._first_queued() == name else Phase.QUEUED)
                elif name in self._failed:
                    p = replace(p, phase=Phase.FAILED, reason=self._failed[name])
                elif name in self._paused:
                    p = replace(p, phase=Phase.PAUSED)
                elif name in self._ocr_paused:
                    done, total = self._ocr_paused[name]
                    p = replace(p, phase=Phase.OCR_PAUSED, done=done, total=total)
            out[name] = replace(p, live=self._live(name), live_reason=self.live_problem if self._live(name) is LiveState.FAILED else "")
        return out

    def set_snapshot(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        self._stored = {s.name: s.status.progress() for s in snapshots}
        self._paused = {n: kw for n, kw in self._paused.items() if n in self._stored and self._stored[n].semantic is not SemanticState.OK}
        self._ocr_paused = {n: counts for n, counts in self._ocr_paused.items() if n in self._stored}
        for name, running in list(self._running.items()):
            stored = self._stored.get(name)
            if stored is None:
                self._running.pop(name)
            elif running.phase is Phase.EMBEDDING:  # the stored semantic state and note cover, the running counts
                self._running[name] = replace(running, semantic=stored.semantic, reason=stored.reason, cover=stored.cover)
        self._emit()

    def started(self, names: list[str]) -> None:
        self._queued = dict.fromkeys(names)
        for name in names:
            self._paused.pop(name, None)
            self._ocr_paused.pop(name, None)
            self._failed.pop(name, None)
        self._emit()

    def progress(self, vault: str, done: int, total: int, phase: str) -> None:
        base = self._running.get(vault) or self._stored.get(vault) or VaultProgress(vault, Phase.KEYWORD)
        meter = self._meters.setdefault((vault, phase), RateMeter())
        meter.add(self.clock(), done)
        eta = meter.time_left(total - done)
        note_pass = phase == NOTE_PHASE
        self._running = {vault: replace(base, phase=_PHASES.get(phase, Phase.KEYWORD), done=done, total=total, eta=eta, note_pass=note_pass)}
        self._queued.pop(vault, None)
        self._emit()
        if note_pass and done == total:
            self._refresh()  # every note has a vector now: the next snapshot counts them (NoteCover)

    def finished(self, reports: list[Any] | None = None) -> None:
        """The index job ended; a vault whose embedding was cancelled part-way is paused."""
        for r in reports or []:
            if r.keyword.cancelled:
                self._paused[r.keyword.vault] = False
            elif r.embedding is not None and r.embedding.cancelled:
                self._paused[r.keyword.vault] = True
            elif r.ocr is not None and r.ocr.cancelled:
                self._ocr_paused[r.keyword.vault] = self._ocr_counts(r.keyword.vault)
        self._running.clear()
        self._queued.clear()
        self._meters.clear()
        self._emit()

    def _ocr_counts(self, vault: str) -> tuple[int, int]:
        """(files read, files) where the cancelled OCR stage stopped, from its last progress."""
        running = self._running.get(vault)
        if running is None or running.phase is not Phase.OCR:
            return 0, 0
        return running.done, running.total

    def failed(self, message: str) -> None:
        """An index job's failure, laid on the vault it was working on (the message names the cause)."""
        name = next(iter(self._running), None) or self._first_queued()
        if name is not None:
            self._failed[name] = message
            self._running.pop(name, None)
        self._emit()

    def _first_queued(self) -> str | None:
        return next(iter(self._queued), None)

    def set_live(self, watched: tuple[str, ...], caught_up: set[str]) -> None:
        self._watched, self._caught_up = set(watched), set(caught_up)
        self._emit()

    def set_live_problem(self, message: str) -> None:
        self.live_problem = message
        self._emit()

    def _live(self, name: str) -> LiveState:
        if name not in self._watched:
            return LiveState.OFF
        if self.live_problem:
            return LiveState.FAILED
        return LiveState.LIVE if name in self._caught_up else LiveState.WAITING

    def _emit(self) -> None:
        self.changed.emit(self.all())
