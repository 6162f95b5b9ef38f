"""A real HTTP server on 127.0.0.1 that speaks the OpenAI and Ollama embedding APIs.

Tests queue scripted replies (status, body, headers, delay); once the queue is
empty the server answers with deterministic, deliberately non-normalised
vectors, so the client's normalisation and ordering are tested too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

FAKE_DIMS = 4


def fake_vector(text: str) -> list[float]:
    """What the fake server returns for `text`: distinct per text, never unit length."""
    return [float(len(text) + 1), float(sum(map(ord, text)) % 7 + 1), 1.0, 2.0]


def expected_vectors(texts: list[str]) -> np.ndarray:
    """`fake_vector` rows after the client's L2 normalisation."""
    raw = np.array([fake_vector(t) for t in texts], dtype=np.float32)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


@dataclass
class Reply:
    """One scripted answer."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


class FakeEmbeddingServer:
    """State shared between the test and the handler threads."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        self.url = ""
        self._lock = threading.Lock()

    def queue(
        self,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        """Answer the next unanswered request with this instead of vectors."""
        with self._lock:
            self.replies.append(Reply(status, body, headers or {}, delay_s))

    @staticmethod
    def expected(texts: list[str]) -> np.ndarray:
        """The unit vectors a correct client returns for `texts`."""
        return expected_vectors(texts)

    def handle(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            if self.replies:
                return self.replies.pop(0)
        texts = body["input"]
        if path == "/v1/embeddings":
            data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                    for i, t in enumerate(texts)]
            # Reversed on purpose: clients must order by "index".
            return Reply(200, {"object": "list", "data": data[::-1], "model": body["model"]})
        if path == "/api/embed":
            vectors = [fake_vector(t) for t in texts]
            return Reply(200, {"model": body["model"], "embeddings": vectors})
        return Reply(404, {"error": "page not found"})


def _handler_for(server: FakeEmbeddingServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"null")
            reply = server.handle(self.path, dict(self.headers.items()), body)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            payload = json.dumps(reply.body).encode() if reply.body is not None else b""
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@pytest.fixture
def embedding_server() -> Iterator[FakeEmbeddingServer]:
    """A live server on an ephemeral port, shut down after the test."""
    state = FakeEmbeddingServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever,
        kwargs={"poll_interval": 0.02},  # shutdown() waits up to one poll interval
        name="fake-embed-server",
        daemon=True,)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
