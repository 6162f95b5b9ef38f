"""The shared server's life: bound to loopback, run by uvicorn on its own thread and event loop,
announced in a state file, stopped cleanly.

The app and `cairn serve` both use `AgentService`. `start()` binds the socket on
the caller's thread (so "port in use" is an error at once, not a log line) and
returns; uvicorn serves on a thread of its own, so the UI thread never waits on
it. While it runs, `agents/server.json` in the data folder (owner-only) names the
port and pid and holds a token for the local stdio bridge (`cairn mcp`), which is
how a stdio client reaches the running server instead of loading a second engine.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from core.agents.audit import AuditLog
from core.agents.gate import AgentGate, BackOff
from core.agents.scope import Scope
from core.agents.server import CallLimits, build_agent_server
from core.agents.tokens import Agent, AgentStore, agents_dir, hash_token, new_token
from core.base.atomic import make_private, write_json_atomic
from core.base.paths import AppPaths
from core.base.thread_priority import lower_this_thread
from core.engine import Engine

log = logging.getLogger("cairn.agents")

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
MCP_PATH = "/mcp"
BRIDGE_AGENT = "local-stdio"  # the name `cairn mcp` calls under when it bridges


class ServerState(StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ServerOptions:
    port: int = DEFAULT_PORT  # 0 = any free port (tests)
    max_body_bytes: int = 256 * 1024
    body_timeout: float = 10.0  # seconds to receive a request body; then 408
    max_in_flight: int = 32  # requests past the door at once; more get 503 + Retry-After
    max_connections: int = 1000  # open connections uvicorn keeps before refusing all (a last resort)
    limits: CallLimits = field(default_factory=CallLimits)
    backoff: BackOff | None = None


@dataclass(frozen=True, slots=True)
class RunningServer:
    """What the state file says about a server on this data folder."""

    url: str
    port: int
    pid: int
    bridge_token: str


def state_file(paths: AppPaths) -> Path:
    return agents_dir(paths) / "server.json"


def url_for(port: int) -> str:
    return f"http://{HOST}:{port}{MCP_PATH}"


def bridge_agent(token: str) -> Agent:
    """The local stdio bridge: the user's own client, so every vault and tool, internal notes too
    (as `cairn mcp` in-process); restricted notes never, like every agent."""
    return Agent(BRIDGE_AGENT, hash_token(token), "", Scope(internal=True, rate=0))


class AgentService:
    """Start, stop and describe the shared MCP server for one engine."""

    def __init__(self, paths: AppPaths, engine_source: Callable[[], Engine], options: ServerOptions | None = None) -> None:
        self.paths = paths
        self.engine_source = engine_source
        self.options = options or ServerOptions()
        self.store = AgentStore(paths)
        self.audit = AuditLog(paths)
        self.port = 0
        self.error = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._bridge_token = ""

    @property
    def url(self) -> str:
        return url_for(self.port) if self.port else ""

    @property
    def state(self) -> ServerState:
        if self._server is None:
            return ServerState.FAILED if self.error else ServerState.STOPPED
        if self._thread is not None and not self._thread.is_alive():
            return ServerState.FAILED if not self._server.should_exit else ServerState.STOPPED
        return ServerState.RUNNING if self._server.started else ServerState.STARTING

    def start(self) -> None:
        """Bind 127.0.0.1:port now (OSError if taken) and serve on a background thread."""
        if self._server is not None:
            return
        self.error = ""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if os.name != "nt":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, self.options.port))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            self.error = f"cannot listen on {HOST}:{self.options.port}: {exc.strerror or exc}"
            raise
        self.port = sock.getsockname()[1]
        self._bridge_token = new_token()
        config = uvicorn.Config(
            self.build_app(),
            log_level="warning",
            limit_concurrency=self.options.max_connections,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=3,
            lifespan="on",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, args=(sock,), name="cairn-agents-http", daemon=True)
        self._thread.start()

    def build_app(self) -> ASGIApp:
        mcp = build_agent_server(self.engine_source, self.audit, self.options.limits)
        inner = mcp.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=self.options.max_body_bytes,
            host=HOST,
        )
        return AgentGate(
            inner,
            verify=self._verify,
            port=self.port,
            max_body=self.options.max_body_bytes,
            max_in_flight=self.options.max_in_flight,
            body_timeout=self.options.body_timeout,
            backoff=self.options.backoff,
        )

    def _verify(self, token: str) -> Agent | None:
        if self._bridge_token and token and hmac.compare_digest(hash_token(token), hash_token(self._bridge_token)):
            return bridge_agent(token)
        return self.store.verify(token)

    def _serve(self, sock: socket.socket) -> None:
        assert self._server is not None
        try:
            lower_this_thread(self.options.limits.thread_nice)  # the event loop gives way to the UI thread too
            self._write_state()
            self._server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - SystemExit from uvicorn included: reported, not raised
            self.error = f"the agents server stopped: {exc}"
            log.exception("agents server failed")
        finally:
            sock.close()
            self._remove_state()

    def wait_running(self, timeout: float = 10.0) -> bool:
        """Block until serving (for the CLI and tests; the app polls `state` instead)."""
        import time

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.state == ServerState.RUNNING:
                return True
            if self.state in (ServerState.FAILED, ServerState.STOPPED):
                return False
            time.sleep(0.02)
        return False

    def stop(self, timeout: float = 5.0) -> None:
        """Ask uvicorn to finish its requests and exit; join its thread at most `timeout` s."""
        server, thread = self._server, self._thread
        if server is None:
            return
        server.should_exit = True
        if thread is not None and timeout > 0:
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            self._server, self._thread = None, None
        self.audit.close()

    def _write_state(self) -> None:
        path = state_file(self.paths)
        path.parent.mkdir(parents=True, exist_ok=True)
        make_private(path.parent)
        payload = {"url": self.url, "port": self.port, "pid": os.getpid(), "bridge_token": self._bridge_token}
        write_json_atomic(path, payload)
        make_private(path)

    def _remove_state(self) -> None:
        path = state_file(self.paths)
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text()).get("port") == self.port:
                path.unlink()


def find_running(paths: AppPaths, timeout: float = 0.5) -> RunningServer | None:
    """The server announced in the data folder, if its process lives and its port answers."""
    try:
        data: dict[str, Any] = json.loads(state_file(paths).read_text(encoding="utf-8"))
        info = RunningServer(str(data["url"]), int(data["port"]), int(data["pid"]), str(data["bridge_token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if os.name != "nt":
        try:
            os.kill(info.pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
    try:
        with socket.create_connection((HOST, info.port), timeout=timeout):
            return info
    except OSError:
        return None
