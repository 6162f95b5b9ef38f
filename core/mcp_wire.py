"""The MCP server's stdio wire: every line a client sends gets an answer or is a valid notification.

Split from `core.mcp_server`, which keeps the tools (what a client can ask of
the notes). What is here is transport: JSON-RPC 2.0 checks the SDK does not make
(it drops a line it cannot parse, so a client would wait for ever), one writer
at a time on stdout, and the process's fds 0 and 1 kept away from stray prints
while serving. Nothing here knows about notes or the engine.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, TextIO

import anyio
from mcp import types as mcp_types
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

log = logging.getLogger("cairn.mcp")  # the same logger as core.mcp_server: one name in the user's logs


# -- the wire: every line a client sends gets an answer or is a valid notification ----------
#
# The SDK drops a line it cannot parse (it logs it), so a client that sends malformed JSON, a
# batch array or `params: "oops"` would wait for ever. Each line is checked here first; what
# JSON-RPC 2.0 calls an invalid message gets its error response (-32700 / -32600 / -32602).

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def jsonrpc_problem(line: str) -> dict[str, object] | None:
    """The error response a line deserves, or None if it may go on to the SDK."""
    try:
        msg = json.loads(line)
    except ValueError as exc:
        return _error(None, PARSE_ERROR, f"Parse error: not valid JSON ({exc})")
    if isinstance(msg, list):
        return _error(None, INVALID_REQUEST, "Invalid Request: batch arrays are not supported; send one JSON-RPC message per line")
    if not isinstance(msg, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    raw_id = msg.get("id")
    req_id = raw_id if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else None
    if msg.get("jsonrpc") != "2.0":
        return _error(req_id, INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be \"2.0\"")
    if "method" not in msg:
        if "id" in msg and ("result" in msg or "error" in msg):
            return None  # the client's response to a server request
        return _error(req_id, INVALID_REQUEST, "Invalid Request: no 'method'")
    if not isinstance(msg["method"], str):
        return _error(req_id, INVALID_REQUEST, "Invalid Request: 'method' must be a string")
    if "id" in msg and req_id is None and raw_id is not None:
        return _error(None, INVALID_REQUEST, "Invalid Request: 'id' must be a string or an integer")
    if "params" in msg and not isinstance(msg["params"], dict):
        return _error(req_id, INVALID_PARAMS, "Invalid params: 'params' must be an object") if "id" in msg else _DROP
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(msg, by_name=False)
    except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError, among others
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return _error(req_id, INVALID_REQUEST, f"Invalid Request: {first}") if "id" in msg else _DROP
    return None


_DROP: dict[str, object] = {}  # an invalid notification: JSON-RPC sends no reply to those


def _error(req_id: str | int | None, code: int, message: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}


class _Wire:
    """The protocol's output: whole lines, one writer at a time (the SDK and the checker)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._stream.write, text)

    async def flush(self) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._stream.flush)

    async def reply(self, message: dict[str, object]) -> None:
        await self.write(json.dumps(message, separators=(",", ":")) + "\n")
        await self.flush()


class _CheckedLines:
    """The client's lines, minus the invalid ones, which are answered here."""

    def __init__(self, stream: TextIO, wire: _Wire) -> None:
        self._stream = stream
        self._wire = wire

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            line = await anyio.to_thread.run_sync(self._stream.readline)
            if not line:
                return
            if not line.strip():
                continue
            problem = jsonrpc_problem(line)
            if problem is None:
                yield line
            elif problem is _DROP:
                log.warning("dropped an invalid notification: %.200s", line.strip())
            else:
                log.warning("answered an invalid message with error %s", problem["error"]["code"])  # type: ignore[index]
                await self._wire.reply(problem)


async def serve_checked_stdio(server: MCPServer) -> None:
    await serve_lowlevel_stdio(server._lowlevel_server)


async def serve_lowlevel_stdio(low: Server[Any]) -> None:
    """Serve a low-level SDK server on the checked wire (the stdio bridge to `cairn serve` uses it too)."""
    from mcp.server.stdio import stdio_server

    with _claimed_std_streams() as (wire_in, wire_out):
        wire = _Wire(wire_out)
        async with stdio_server(stdin=_CheckedLines(wire_in, wire), stdout=wire) as (read, write):  # type: ignore[arg-type]
            await low.run(read, write, low.create_initialization_options())


@contextlib.contextmanager
def _claimed_std_streams() -> Iterator[tuple[TextIO, TextIO]]:
    """Serve the protocol from private copies of fds 0 and 1, and point fd 0 at the null device
    and fd 1 at stderr meanwhile, so a stray print (ours or a library's) cannot corrupt the
    stream and a child process cannot eat the client's input. As the SDK does for itself,
    which it skips when given streams."""
    sys.stdout.flush()
    try:
        wire_in_fd, wire_out_fd = os.dup(0), os.dup(1)
    except OSError:  # no real descriptors (an embedding host): serve the sys streams as they are
        yield sys.stdin, sys.stdout
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    wire_in = open(wire_in_fd, encoding="utf-8", errors="replace", newline="\n")
    wire_out = open(wire_out_fd, "w", encoding="utf-8", newline="\n")
    try:
        yield wire_in, wire_out
    finally:
        with contextlib.suppress(OSError, ValueError):
            wire_out.flush()
        with contextlib.suppress(OSError):
            os.dup2(wire_in.fileno(), 0)
            os.dup2(wire_out.fileno(), 1)
        wire_in.close()
        wire_out.close()
