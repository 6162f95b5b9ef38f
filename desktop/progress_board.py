"""Each vault's `VaultProgress`, kept up to date on the GUI thread: the one thing views read.

The status bar, Index health and the tree read the same object, so they cannot
disagree: the stored state comes from the latest snapshot, the phase and counts
from the running index job, the live state from the watcher.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal

from core.base.vault_state import LiveState, Phase, VaultProgress
from desktop.state import VaultSnapshot

_PHASES = {"keyword": Phase.KEYWORD, "embedding": Phase.EMBEDDING}


class ProgressBoard(QObject):
    """Signals:
    changed: A dict of vault name to `VaultProgress`, after any of them changed.
    """

    changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._stored: dict[str, VaultProgress] = {}
        self._running: dict[str, VaultProgress] = {}  # vaults an index job is working on now
        self._queued: set[str] = set()
        self._watched: set[str] = set()
        self._caught_up: set[str] = set()
        self.live_problem = ""  # the watcher's last error, until it reports progress again

    def get(self, name: str) -> VaultProgress | None:
        return self.all().get(name)

    def all(self) -> dict[str, VaultProgress]:
        out: dict[str, VaultProgress] = {}
        for name, stored in self._stored.items():
            p = self._running.get(name, stored)
            if name in self._queued and name not in self._running:
                p = replace(p, phase=Phase.QUEUED)
            out[name] = replace(p, live=self._live(name), live_reason=self.live_problem if self._live(name) is LiveState.FAILED else "")
        return out

    def set_snapshot(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        self._stored = {s.name: s.status.progress() for s in snapshots}
        for name, running in list(self._running.items()):
            stored = self._stored.get(name)
            if stored is None:
                self._running.pop(name)
            elif running.phase is Phase.EMBEDDING:  # the stored semantic state, the running counts
                self._running[name] = replace(stored, phase=Phase.EMBEDDING, done=running.done, total=running.total)
        self._emit()

    def started(self, names: list[str]) -> None:
        self._queued = set(names)
        self._emit()

    def progress(self, vault: str, done: int, total: int, phase: str) -> None:
        base = self._running.get(vault) or self._stored.get(vault) or VaultProgress(vault, Phase.KEYWORD)
        self._running = {vault: replace(base, phase=_PHASES.get(phase, Phase.KEYWORD), done=done, total=total)}
        self._queued.discard(vault)
        self._emit()

    def finished(self) -> None:
        self._running.clear()
        self._queued.clear()
        self._emit()

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
