"""The app's side of the shared MCP server: start, stop and report its state without blocking the UI.

`core.agents.runner.AgentService` binds the port at once (fast) and serves on a
thread with its own event loop; this object only asks it to start or stop and
polls its state on a timer, so the GUI thread never waits for the server. The
engine is read through the controller each call, so a rebuilt engine (new
settings) is what agents reach next.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from core.base.paths import AppPaths
from core.engine import Engine

if TYPE_CHECKING:  # the server's stack (uvicorn, starlette, the SDK) loads only when it is switched on
    from core.agents.runner import AgentService

POLL_MS = 200
STOPPED, STARTING, RUNNING, FAILED = "stopped", "starting", "running", "failed"  # `ServerState` values


class AgentServerControl(QObject):
    """Owns the agents server for the app; `changed` fires when its state or address changes."""

    changed = Signal()

    def __init__(self, paths: AppPaths, engine_source: Callable[[], Engine], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._paths = paths
        self._engine_source = engine_source
        self.service: AgentService | None = None
        self._last: tuple[str, str, str] = ("", "", "")
        self._wanted = STOPPED
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def state(self) -> str:
        return self.service.state.value if self.service is not None else STOPPED

    @property
    def url(self) -> str:
        return self.service.url if self.service is not None and self.state == RUNNING else ""

    @property
    def error(self) -> str:
        return self.service.error if self.service is not None else ""

    def start(self, port: int) -> bool:
        """Listen on 127.0.0.1:port; False (and `error` says why) if the port is taken."""
        if self.service is not None and self.state in (RUNNING, STARTING):
            return True
        self._wanted = RUNNING
        from core.agents.runner import AgentService, ServerOptions

        self.service = AgentService(self._paths, self._engine_source, ServerOptions(port=port))
        try:
            self.service.start()
        except OSError:
            self._poll()
            return False
        self._timer.start()
        self._poll()
        return True

    def stop(self) -> None:
        """Ask the server to finish its calls and stop; the timer reports when it has."""
        self._wanted = STOPPED
        if self.service is not None:
            self.service.stop(timeout=0)  # no join here: the UI thread does not wait
            self._timer.start()
        self._poll()

    def shutdown(self, timeout: float = 3.0) -> None:
        """On quit: stop and wait a bounded time for in-flight calls."""
        self._timer.stop()
        if self.service is not None:
            self.service.stop(timeout=timeout)

    def describe(self) -> str:
        state = self.state
        if state == RUNNING:
            return f"Running at {self.url}"
        if state == STARTING:
            return "Starting…"
        if state == FAILED or self.error:
            return f"Not running: {self.error or 'stopped unexpectedly'}"
        return "Stopped"

    def _poll(self) -> None:
        now = (self.state, self.url, self.error)
        if self.state in (self._wanted, FAILED):
            self._timer.stop()
        if now != self._last:
            self._last = now
            self.changed.emit()
