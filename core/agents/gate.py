"""The door in front of the MCP endpoint: Host and Origin first, then the token, with a back-off.

Order matters. Host/Origin are checked before anything else (with the SDK's own
`TransportSecurityMiddleware`), so a web page in the user's browser — a DNS
rebinding attack or a plain cross-site POST — is refused before it can even
count as a bad token. Then the bearer token: a wrong, revoked or missing one
gets 401, and after `free_failures` of them in a row every token is refused for a
growing while (1, 2, 4 … s up to `max_delay`), so guessing cannot be fast. A
caller let in is named in the ASGI scope (`AGENT_KEY`) for the tools to read.
A body that has not arrived within `body_timeout` seconds gets 408, so a slow client
cannot hold a connection for ever. Past `max_in_flight` requests at once the answer is 503 with Retry-After (uvicorn's own
connection limit refuses every request of a burst alike, so it is only a last resort).
No CORS headers are ever sent, so a browser never lets a page read an answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.agents.server import AGENT_KEY
from core.agents.tokens import Agent
from core.mcp_wire import jsonrpc_problem


def loopback_security(port: int) -> TransportSecuritySettings:
    """Only this machine's own names for this port as Host; only the server's own pages as Origin."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )


@dataclass
class BackOff:
    """Repeated bad tokens lock the door for a growing while; a quiet spell forgets them."""

    free_failures: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0
    failures: int = 0
    locked_until: float = 0.0
    last_failure: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def wait(self, now: float) -> float:
        with self._lock:
            if self.failures and now - self.last_failure > 2 * self.max_delay:
                self.failures = 0
            return max(0.0, self.locked_until - now)

    def failed(self, now: float) -> float:
        """Count a bad token; the seconds the door stays shut from now."""
        with self._lock:
            self.failures += 1
            self.last_failure = now
            over = self.failures - self.free_failures
            if over >= 0:
                self.locked_until = now + min(self.max_delay, self.base_delay * (2**over))
            return max(0.0, self.locked_until - now)


class AgentGate:
    """ASGI middleware: refuses foreign pages and unknown tokens, names the agent for the rest."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        verify: Callable[[str], Agent | None],
        port: int,
        max_body: int,
        max_in_flight: int = 32,
        body_timeout: float = 10.0,
        backoff: BackOff | None = None,
    ) -> None:
        self.app = app
        self.body_timeout = body_timeout
        self.max_body = max_body
        self.max_in_flight = max_in_flight
        self.in_flight = 0
        self.verify = verify
        self.security = TransportSecurityMiddleware(loopback_security(port))
        self.backoff = backoff or BackOff()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # lifespan: the SDK's session manager starts here
            return
        request = Request(scope, receive)
        refused = await self.security.validate_request(request, is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        now = time.monotonic()
        wait = self.backoff.wait(now)
        if wait > 0:  # knocking while locked out counts too: hammering only makes the wait longer
            await _unauthorized("too many bad tokens; wait before trying again", self.backoff.failed(now))(scope, receive, send)
            return
        agent = self.verify(_bearer(request))
        if agent is None:
            await _unauthorized("missing, unknown or revoked token", self.backoff.failed(now))(scope, receive, send)
            return
        if request.method != "POST":
            # Stateless JSON answers only: no server-initiated stream to GET, no session to DELETE.
            await JSONResponse({"error": "use POST"}, status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        try:
            with anyio.fail_after(self.body_timeout):
                body = await _read_body(receive, self.max_body)
        except TimeoutError:  # a slow or stalled client gives its connection back
            await JSONResponse(_rpc_error(None, -32600, "Invalid Request: body not received in time"), status_code=408)(scope, receive, send)
            return
        if body is None:
            await JSONResponse(_rpc_error(None, -32600, "Invalid Request: body too large"), status_code=413)(scope, receive, send)
            return
        problem = jsonrpc_problem(body.decode("utf-8", errors="replace"))
        if problem is not None:
            # The SDK answers every malformed shape with -32602; JSON-RPC 2.0 says -32600 for most.
            status, payload = (202, None) if not problem else (400, problem)
            await (Response(status_code=status) if payload is None else JSONResponse(payload, status_code=status))(scope, receive, send)
            return
        if self.in_flight >= self.max_in_flight:
            busy = _rpc_error(None, -32000, "Server busy: too many requests at once; retry after 1 s")
            await JSONResponse(busy, status_code=503, headers={"Retry-After": "1"})(scope, receive, send)
            return
        scope[AGENT_KEY] = agent
        self.in_flight += 1  # one event loop: no lock needed
        try:
            await self.app(scope, _replay(body), send)
        finally:
            self.in_flight -= 1


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None past `limit` bytes (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    """A `receive` that hands the already-read body to the app once, then waits for the disconnect."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        return {"type": "http.disconnect"}  # pragma: no cover - never reached

    return receive


def _rpc_error(req_id: object, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}


def _bearer(request: Request) -> str:
    kind, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if kind.lower() == "bearer" else ""


def _unauthorized(message: str, retry_after: float) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="cairn"'}
    if retry_after > 0:
        headers["Retry-After"] = str(max(1, round(retry_after)))
    return JSONResponse(_rpc_error(None, -32001, f"Unauthorized: {message}"), status_code=401, headers=headers)
