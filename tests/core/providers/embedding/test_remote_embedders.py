"""OpenAI-compatible and Ollama embedders against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from core.providers.embedding import EmbedderUnavailable, EmbeddingCancelled, OllamaEmbedder, OpenAIEmbedder

if TYPE_CHECKING:
    from conftest import FakeEmbeddingServer

KEY = "sk-test-SECRET-0123456789"
TEXTS = [f"note number {i} " + "x" * (i % 13) for i in range(70)]


class SleepRecorder:
    """Stands in for time.sleep so retries take no time and can be asserted."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Remote:
    """Builds embedders aimed at the fake server and closes them after the test."""

    def __init__(self, server: FakeEmbeddingServer) -> None:
        self.server = server
        self.sleeps = SleepRecorder()
        self._made: list[OpenAIEmbedder | OllamaEmbedder] = []

    def openai(self, base_url: str | None = None, **kwargs: Any) -> OpenAIEmbedder:
        kwargs.setdefault("api_key", KEY)
        url = self.server.url if base_url is None else base_url
        embedder = OpenAIEmbedder(url, "text-embedding-test", sleep=self.sleeps, **kwargs)
        self._made.append(embedder)
        return embedder

    def ollama(self, base_url: str | None = None, **kwargs: Any) -> OllamaEmbedder:
        url = self.server.url if base_url is None else base_url
        embedder = OllamaEmbedder(url, "nomic-embed-text", sleep=self.sleeps, **kwargs)
        self._made.append(embedder)
        return embedder

    def close(self) -> None:
        for embedder in self._made:
            embedder.close()


@pytest.fixture
def remote(embedding_server: FakeEmbeddingServer) -> Iterator[Remote]:
    harness = Remote(embedding_server)
    yield harness
    harness.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_openai_embeds_in_batches_of_64_and_keeps_order(remote: Remote) -> None:
    with remote.openai() as embedder:
        vectors = embedder.embed_documents(TEXTS)
        assert embedder.dims == 4
    assert vectors.dtype == np.float32 and vectors.shape == (70, 4)
    np.testing.assert_allclose(vectors, remote.server.expected(TEXTS), atol=1e-6)
    requests = remote.server.requests
    assert [r.path for r in requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert [len(r.body["input"]) for r in requests] == [64, 6]
    assert requests[0].body["model"] == "text-embedding-test"
    assert requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert remote.sleeps.waits == []


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_openai_base_url_may_include_v1(remote: Remote, suffix: str) -> None:
    embedder = remote.openai(remote.server.url + suffix, api_key=None)
    embedder.embed_query("hello")
    assert remote.server.requests[0].path == "/v1/embeddings"
    assert "Authorization" not in remote.server.requests[0].headers


def test_ollama_embeds_in_batches_of_64_via_api_embed(remote: Remote) -> None:
    with remote.ollama() as embedder:
        vectors = embedder.embed_documents(TEXTS)
    np.testing.assert_allclose(vectors, remote.server.expected(TEXTS), atol=1e-6)
    assert [r.path for r in remote.server.requests] == ["/api/embed", "/api/embed"]
    assert [len(r.body["input"]) for r in remote.server.requests] == [64, 6]
    assert remote.server.requests[0].body["model"] == "nomic-embed-text"


def test_model_hash_names_provider_url_and_model(remote: Remote) -> None:
    assert remote.ollama().model_hash == (
        f"ollama:{remote.server.url}:nomic-embed-text"
    )
    assert remote.openai().model_hash == (
        f"openai:{remote.server.url}:text-embedding-test"
    )


def test_dims_are_probed_from_the_server_when_not_given(remote: Remote) -> None:
    embedder = remote.ollama()
    assert embedder.dims == 4
    assert embedder.dims == 4
    assert len(remote.server.requests) == 1


def test_vectors_of_the_wrong_width_are_an_error(remote: Remote) -> None:
    with pytest.raises(EmbedderUnavailable) as info:
        remote.ollama(dims=768).embed_query("hello")
    assert info.value.reason == "http_error"
    assert "768" in info.value.message


def test_429_waits_for_retry_after_then_succeeds(remote: Remote) -> None:
    remote.server.queue(429, {"error": "slow down"}, headers={"Retry-After": "7"})
    vector = remote.openai().embed_query("hello")
    assert remote.sleeps.waits == [7.0]
    assert len(remote.server.requests) == 2
    np.testing.assert_allclose(vector, remote.server.expected(["hello"])[0], atol=1e-6)


def test_500_backs_off_then_succeeds(remote: Remote) -> None:
    remote.server.queue(500, {"error": "boom"})
    remote.ollama().embed_query("hello")
    assert remote.sleeps.waits == [0.5]
    assert len(remote.server.requests) == 2


def test_persistent_503_gives_up_after_four_attempts(remote: Remote) -> None:
    for _ in range(4):
        remote.server.queue(503, {"error": "overloaded"})
    with pytest.raises(EmbedderUnavailable) as info:
        remote.ollama().embed_query("hello")
    assert info.value.reason == "http_error"
    assert "503" in info.value.message and "overloaded" in info.value.message
    assert remote.sleeps.waits == [0.5, 1.0, 2.0]
    assert len(remote.server.requests) == 4


def test_long_retry_after_is_capped_at_30_seconds(remote: Remote) -> None:
    remote.server.queue(429, None, headers={"Retry-After": "3600"})
    remote.openai().embed_query("hello")
    assert remote.sleeps.waits == [30.0]


def test_401_is_unauthorized_and_never_shows_the_key(
    remote: Remote, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    remote.server.queue(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    embedder = remote.openai()
    with pytest.raises(EmbedderUnavailable) as info:
        embedder.embed_query("hello")
    assert info.value.reason == "unauthorized"
    assert "401" in info.value.message
    shown = [info.value.message, str(info.value), repr(info.value), repr(embedder), caplog.text]
    for text in shown:
        assert KEY not in text
        assert "SECRET" not in text
    assert remote.sleeps.waits == []


def test_403_is_unauthorized(remote: Remote) -> None:
    remote.server.queue(403, {"error": "forbidden"})
    with pytest.raises(EmbedderUnavailable) as info:
        remote.openai().embed_query("hello")
    assert info.value.reason == "unauthorized"


def test_credentials_in_the_server_address_never_reach_a_message_or_the_stored_model_identity(remote: Remote) -> None:
    """A proxy's basic-auth `user:password@` in the base URL stays out of errors, repr and vector metadata."""
    with_auth = remote.server.url.replace("http://", "http://cairn:hunter2-SECRET@")
    remote.server.queue(401, {"error": {"message": "no"}})
    embedder = remote.openai(with_auth)
    with pytest.raises(EmbedderUnavailable) as rejected:
        embedder.embed_query("hello")
    down = remote.ollama(f"http://cairn:hunter2-SECRET@127.0.0.1:{free_port()}")
    with pytest.raises(EmbedderUnavailable) as refused:
        down.embed_query("hello")
    assert refused.value.reason == "connection_refused"
    for text in (str(rejected.value), str(refused.value), repr(embedder), repr(down), embedder.model_hash, down.model_hash):
        assert "SECRET" not in text and "cairn:" not in text
    assert "127.0.0.1" in str(refused.value)  # the address is still named, without its credentials


def test_connection_refused_names_the_url(remote: Remote) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(EmbedderUnavailable) as info:
        remote.ollama(url).embed_query("hello")
    assert info.value.reason == "connection_refused"
    assert f"{url}/api/embed" in info.value.message


def test_ollama_404_model_not_found_is_unknown_model(remote: Remote) -> None:
    not_found = 'model "nomic-embed-text" not found, try pulling it first'
    remote.server.queue(404, {"error": not_found})
    with pytest.raises(EmbedderUnavailable) as info:
        remote.ollama().embed_query("hello")
    assert info.value.reason == "unknown_model"
    assert "nomic-embed-text" in info.value.message and "ollama pull" in info.value.message


def test_openai_error_saying_model_does_not_exist_is_unknown_model(remote: Remote) -> None:
    remote.server.queue(
        400, {"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}
    )
    with pytest.raises(EmbedderUnavailable) as info:
        remote.openai().embed_query("hello")
    assert info.value.reason == "unknown_model"


def test_slow_server_times_out(remote: Remote) -> None:
    remote.server.queue(200, {"embeddings": [[1.0, 0.0]]}, delay_s=1.0)
    with pytest.raises(EmbedderUnavailable) as info:
        remote.ollama(timeout=0.2).embed_query("hello")
    assert info.value.reason == "timeout"
    assert remote.server.url in info.value.message


def test_malformed_json_is_an_http_error(remote: Remote) -> None:
    remote.server.queue(200, {"unexpected": True})
    with pytest.raises(EmbedderUnavailable) as info:
        remote.openai().embed_query("hello")
    assert info.value.reason == "http_error"


def test_progress_and_cancel_work_per_request(remote: Remote) -> None:
    cancel = threading.Event()
    calls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        cancel.set()

    with pytest.raises(EmbeddingCancelled):
        remote.ollama().embed_documents(TEXTS, progress=progress, cancel=cancel)
    assert calls == [(64, 70)]
    assert len(remote.server.requests) == 1
