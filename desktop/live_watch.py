"""The controller's live-indexing part: which vaults are watched, and what an update triggers."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot

from core.watcher import LiveUpdate
from desktop.live import describe_update, touched


class LiveWatch:
    """Mixed into AppController, which provides the engine, settings, signals and close state."""

    live: Any
    board: Any
    engine: Any
    settings: Any
    vaults: Any
    closed: bool
    _closing: bool
    _shut: bool
    _close_token: Any
    _pending_config: Any
    liveUpdated: Any
    message: Any
    closeReady: Any

    @property
    def watched(self) -> tuple[str, ...]:
        """The vaults whose edits are followed live right now."""
        return self.live.watched

    def _sync_watch(self) -> None:
        """Follow every vault of the current engine live, from the moment it is added.

        Indexing does not wait for this or stop it: the watcher queues a vault's events
        until its keyword index exists, then catches it up with its folder.
        """
        if self._closing or self._shut or self._pending_config is not None:
            return
        self.live.watch(self.engine, [v.name for v in self.vaults], self.settings.live_debounce_ms / 1000)

    @Slot(object)
    def _on_live_update(self, update: LiveUpdate) -> None:
        if self._closing or self._shut:
            return
        self.liveUpdated.emit(update)
        if self.board.live_problem:
            self.board.set_live_problem("")  # it works again
        if not touched(update):
            return
        self.message.emit(describe_update(update))
        self.refresh()  # tree counts and tags; the shown query then runs again (`_on_snapshot`)

    @Slot(int)
    def _on_live_stopped(self, token: int) -> None:
        if self._closing:
            if token == self._close_token and not self.closed:
                self.closed = True
                self.closeReady.emit()
            return
        if self._pending_config is not None and not self.is_indexing() and not self.live.active:
            config, self._pending_config = self._pending_config, None
            self._replace_engine(config)
