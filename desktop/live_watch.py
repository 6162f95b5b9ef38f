"""What a live update means for the views: a status-bar sentence, a refresh, the live state per vault."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from core.watcher import LiveUpdate
from desktop.live import LiveIndexing, describe_update, touched
from desktop.progress_board import ProgressBoard


class LiveWatch(QObject):
    """Turns the watcher's news (relayed by `LiveIndexing`) into messages and the board's live state.

    Signals:
        changed: A `LiveUpdate` that changed what a search can find (the views refresh).
        message: A sentence for the status bar.
    """

    changed = Signal(object)
    message = Signal(str)

    def __init__(self, live: LiveIndexing, board: ProgressBoard, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.live = live
        self._board = board
        live.updated.connect(self._on_update)
        live.failed.connect(self._on_failed)
        live.watchingChanged.connect(self._on_live_state)
        live.caughtUp.connect(self._on_caught_up)

    @property
    def watched(self) -> tuple[str, ...]:
        """The vaults whose edits are followed live right now."""
        return self.live.watched

    @Slot(object)
    def _on_update(self, update: LiveUpdate) -> None:
        if self._board.live_problem:
            self._board.set_live_problem("")  # it works again
        if touched(update):
            self.message.emit(describe_update(update))
            self.changed.emit(update)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._board.set_live_problem(message)
        self.message.emit(message)

    @Slot(object)
    def _on_caught_up(self, name: object) -> None:
        if self._board.live_problem:
            self._board.set_live_problem("")  # a retried catch-up went through: live again
        self._on_live_state(name)

    @Slot(object)
    def _on_live_state(self, _news: object) -> None:
        self._board.set_live(self.live.watched, self.live.caught_up)
