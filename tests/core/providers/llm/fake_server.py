"""A real HTTP/1.1 server on 127.0.0.1 that streams scripted chat replies.

Each test queues `Reply`s; every request takes the next one. A reply is
written as chunked transfer encoding, one flushed chunk per piece with a small
gap, so the client really receives the answer in pieces. A reply can also
stall before its headers (timeouts) or drop the connection mid-body
(truncation). The server notes when the client hangs up while it is still
writing (cancellation).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from core.providers.llm import AnthropicChat, OllamaChat, OpenAIChat
from core.providers.llm.http_stream import HTTPChatProvider

KEY = "sk-test-SECRET-0123456789"
P = TypeVar("P", bound=HTTPChatProvider)


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        status: HTTP status.
        pieces: Body pieces, each sent as its own flushed chunk.
        headers: Extra response headers.
        content_type: The Content-Type header.
        delay_s: Sleep before sending anything (to trip a read timeout).
        gap_s: Sleep between pieces.
        finish: False drops the connection after the pieces, without the
            final zero-length chunk: a stream cut off mid-way.
    """

    status: int = 200
    pieces: Sequence[bytes] = ()
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    delay_s: float = 0.0
    gap_s: float = 0.01
    finish: bool = True


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    """A plain JSON answer, as servers send errors and model lists."""
    return Reply(status, [json.dumps(body).encode()], headers or {}, "application/json")


def sse(obj: Any, event: str | None = None) -> bytes:
    """One server-sent event carrying `obj` as JSON (or a raw string such as "[DONE]")."""
    data = obj if isinstance(obj, str) else json.dumps(obj)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def openai_chunk(content: str | None = None, *, role: str | None = None, omit: bool = False) -> bytes:
    """An OpenAI `chat.completion.chunk` event; `omit` leaves `content` out of the delta entirely."""
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if not omit:
        delta["content"] = content
    return sse({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})


def openai_stream(*texts: str, done: bool = True) -> list[bytes]:
    """A typical OpenAI stream: role chunk, one chunk per text, finish chunk, `[DONE]`."""
    pieces = [openai_chunk("", role="assistant")] + [openai_chunk(t) for t in texts]
    pieces.append(sse({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if done:
        pieces.append(sse("[DONE]"))
    return pieces


def ollama_stream(*texts: str) -> list[bytes]:
    """Ollama's NDJSON chat stream."""
    lines = [{"model": "m", "message": {"role": "assistant", "content": t}, "done": False} for t in texts]
    lines.append({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
                  "done_reason": "stop", "eval_count": len(texts)})
    return [(json.dumps(line) + "\n").encode() for line in lines]


def anthropic_stream(*texts: str) -> list[bytes]:
    """Anthropic's Messages event stream, with a ping and the usual bookkeeping events."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "role": "assistant",
                                                                  "content": [], "model": "claude"}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
    ]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": t}}) for t in texts]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": len(texts)}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return [sse(body, event) for event, body in events]


class ScriptedServer:
    """State shared between a test and the handler threads."""

    def __init__(self) -> None:
        self.url = ""
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        self.client_hung_up = threading.Event()
        self.pieces_sent = 0
        self._lock = threading.Lock()

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with these, in order."""
        with self._lock:
            self.replies.extend(replies)

    def next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self.replies:
                return self.replies.pop(0)
        return json_reply(500, {"error": "the test queued no reply for this request"})

    def note_piece(self) -> None:
        with self._lock:
            self.pieces_sent += 1


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._answer(None)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            self._answer(json.loads(raw) if raw else None)

        def _answer(self, body: Any) -> None:
            reply = server.next_reply(Recorded(self.command, self.path, dict(self.headers.items()), body))
            try:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Transfer-Encoding", "chunked")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.flush()
                for piece in reply.pieces:
                    time.sleep(reply.gap_s)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                    server.note_piece()
                if reply.finish:
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                else:
                    self.close_connection = True
            except OSError:  # BrokenPipe, ConnectionReset: the client hung up
                server.client_hung_up.set()
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


def serve() -> Iterator[ScriptedServer]:
    """Run a server on an ephemeral port for the duration of the generator."""
    state = ScriptedServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              name="fake-llm-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


class SleepRecorder:
    """Stands in for time.sleep so retries take no time and can be asserted."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Providers:
    """Builds providers aimed at the fake server with a recording sleep; closes them after the test."""

    def __init__(self, server: ScriptedServer) -> None:
        self.server = server
        self.sleeps = SleepRecorder()
        self._made: list[HTTPChatProvider] = []

    def _keep(self, provider: P) -> P:
        self._made.append(provider)
        return provider

    def openai(self, base_url: str | None = None, **kwargs: Any) -> OpenAIChat:
        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("sleep", self.sleeps)
        return self._keep(OpenAIChat(base_url or self.server.url, "smollm2", **kwargs))

    def ollama(self, base_url: str | None = None, **kwargs: Any) -> OllamaChat:
        kwargs.setdefault("sleep", self.sleeps)
        return self._keep(OllamaChat(base_url or self.server.url, "llama3.2", **kwargs))

    def anthropic(self, base_url: str | None = None, **kwargs: Any) -> AnthropicChat:
        kwargs.setdefault("api_key", KEY)
        kwargs.setdefault("sleep", self.sleeps)
        return self._keep(AnthropicChat(base_url or self.server.url, "claude-3-5-haiku-latest", **kwargs))

    def close(self) -> None:
        for provider in self._made:
            provider.close()
