"""Notice when another process changes config.json (the CLI, the MCP server, a second window).

A cheap `stat` every couple of seconds and whenever the app becomes active, instead of
a file-system watch on the data folder (which would also fire on every index write).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication

#: How often the file is looked at while the app runs.
POLL_MS = 2000


class ConfigWatch(QObject):
    """Emits `changed` when the file's size or modification time moved.

    Args:
        path: The file to watch (it may not exist yet).
        parent: Qt parent.
    """

    changed = Signal()

    def __init__(self, path: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._path = path
        self._seen = self._stamp()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.applicationStateChanged.connect(self._on_state)

    def mark_seen(self) -> None:
        """The app wrote the file itself: its own change is not news."""
        self._seen = self._stamp()

    @Slot()
    def check(self) -> None:
        stamp = self._stamp()
        if stamp != self._seen:
            self._seen = stamp
            self.changed.emit()

    def stop(self) -> None:
        self._timer.stop()

    @Slot(Qt.ApplicationState)
    def _on_state(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive:
            self.check()

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self._path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size
