"""The app's side of the shared MCP server: start, stop and report its state without blocking the UI.

Starting loads the server's stack (uvicorn, starlette, the MCP SDK), builds the tools
and binds the port; all of that runs on a short-lived thread, and uvicorn then serves
on a thread of its own (`core.agents.runner.AgentService`). This object only asks, and
polls the state on a timer, so the GUI thread never waits for the server. The engine
is read through the controller on each call, so a rebuilt engine (new settings) is the
one agents reach next.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from core.base.paths import AppPaths
from core.engine import Engine

if TYPE_CHECKING:  # the server's stack loads only when it is switched on, off the GUI thread
    from core.agents.runner import AgentService

POLL_MS = 100
STOPPED, STARTING, RUNNING, FAILED = "stopped", "starting", "running", "failed"  # `ServerState` values


class AgentServerControl(QObject):
    """Owns the agents server for the app; `changed` fires when its state or address changes,
    `failed` with a sentence when it could not start or stopped by itself."""

    changed = Signal()
    failed = Signal(str)

    def __init__(self, paths: AppPaths, engine_source: Callable[[], Engine], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._paths = paths
        self._engine_source = engine_source
        self.service: AgentService | None = None
        self._starter: threading.Thread | None = None
        self._start_error = ""
        self._last: tuple[str, str, str] = ("", "", "")
        self._wanted = STOPPED
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def state(self) -> str:
        if self._starter is not None and self._starter.is_alive():
            return STARTING
        if self._start_error:
            return FAILED
        return self.service.state.value if self.service is not None else STOPPED

    @property
    def url(self) -> str:
        return self.service.url if self.service is not None and self.state == RUNNING else ""

    @property
    def error(self) -> str:
        return self._start_error or (self.service.error if self.service is not None else "")

    def start(self, port: int) -> None:
        """Start serving on 127.0.0.1:port in the background; `changed` / `failed` tell how it went."""
        if self.state in (RUNNING, STARTING):
            return
        self._wanted, self._start_error = RUNNING, ""
        self._starter = threading.Thread(target=self._start, args=(port,), name="cairn-agents-start", daemon=True)
        self._starter.start()
        self._timer.start()
        self._poll()

    def _start(self, port: int) -> None:
        from core.agents.runner import AgentService, ServerOptions

        service = AgentService(self._paths, self._engine_source, ServerOptions(port=port))
        try:
            service.start()
        except OSError:
            self._start_error = service.error
        except Exception as exc:  # noqa: BLE001 - any failure to start is reported, never raised on a thread
            self._start_error = f"the agents server did not start: {exc}"
        self.service = service
        if self._wanted == STOPPED:  # switched off while it was starting
            service.stop(timeout=0)

    def stop(self) -> None:
        """Ask the server to finish its calls and stop; the timer reports when it has."""
        self._wanted, self._start_error = STOPPED, ""
        if self.service is not None:
            self.service.stop(timeout=0)  # no join here: the GUI thread does not wait
        self._timer.start()
        self._poll()

    def shutdown(self, timeout: float = 3.0) -> None:
        """On quit: stop and wait a bounded time for the start and the calls in flight."""
        self._wanted = STOPPED
        self._timer.stop()
        if self._starter is not None:
            self._starter.join(timeout)
        if self.service is not None:
            self.service.stop(timeout=timeout)

    def describe(self) -> str:
        state = self.state
        if state == RUNNING:
            return f"Running at {self.url}"
        if state == STARTING:
            return "Starting…"
        if state == FAILED:
            return f"Not running: {self.error or 'stopped unexpectedly'}"
        return "Stopped"

    def _poll(self) -> None:
        state = self.state
        now = (state, self.url, self.error)
        if state in (self._wanted, FAILED):
            self._timer.stop()
        if now != self._last:
            self._last = now
            self.changed.emit()
            if state == FAILED:
                self.failed.emit(self.describe())
