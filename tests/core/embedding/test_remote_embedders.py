"""OpenAI-compatible and Ollama embedders against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from core.embedding import EmbedderUnavailable, EmbeddingCancelled, OllamaEmbedder, OpenAIEmbedder

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


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


def openai(server: FakeEmbeddingServer, sleeps: SleepRecorder, **kwargs: Any) -> OpenAIEmbedder:
    kwargs.setdefault("api_key", KEY)
    return OpenAIEmbedder(server.url, "text-embedding-test", sleep=sleeps, **kwargs)


def ollama(server: FakeEmbeddingServer, sleeps: SleepRecorder, **kwargs: Any) -> OllamaEmbedder:
    return OllamaEmbedder(server.url, "nomic-embed-text", sleep=sleeps, **kwargs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_openai_embeds_in_batches_of_64_and_keeps_order(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    with openai(embedding_server, sleeps) as embedder:
        vectors = embedder.embed_documents(TEXTS)
        assert embedder.dims == 4
    assert vectors.dtype == np.float32 and vectors.shape == (70, 4)
    np.testing.assert_allclose(vectors, embedding_server.expected(TEXTS), atol=1e-6)
    requests = embedding_server.requests
    assert [r.path for r in requests] == ["/v1/embeddings", "/v1/embeddings"]
    assert [len(r.body["input"]) for r in requests] == [64, 6]
    assert requests[0].body["model"] == "text-embedding-test"
    assert requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert sleeps.waits == []


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_openai_base_url_may_include_v1(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder, suffix: str
) -> None:
    embedder = OpenAIEmbedder(embedding_server.url + suffix, "m", None, sleep=sleeps)
    embedder.embed_query("hello")
    assert embedding_server.requests[0].path == "/v1/embeddings"
    assert "Authorization" not in embedding_server.requests[0].headers


def test_ollama_embeds_in_batches_of_64_via_api_embed(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    with ollama(embedding_server, sleeps) as embedder:
        vectors = embedder.embed_documents(TEXTS)
    np.testing.assert_allclose(vectors, embedding_server.expected(TEXTS), atol=1e-6)
    assert [r.path for r in embedding_server.requests] == ["/api/embed", "/api/embed"]
    assert [len(r.body["input"]) for r in embedding_server.requests] == [64, 6]
    assert embedding_server.requests[0].body["model"] == "nomic-embed-text"


def test_model_hash_names_provider_url_and_model(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    assert ollama(embedding_server, sleeps).model_hash == (
        f"ollama:{embedding_server.url}:nomic-embed-text"
    )
    assert openai(embedding_server, sleeps).model_hash == (
        f"openai:{embedding_server.url}:text-embedding-test"
    )


def test_dims_are_probed_from_the_server_when_not_given(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedder = ollama(embedding_server, sleeps)
    assert embedder.dims == 4
    assert embedder.dims == 4
    assert len(embedding_server.requests) == 1


def test_vectors_of_the_wrong_width_are_an_error(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    with pytest.raises(EmbedderUnavailable) as info:
        ollama(embedding_server, sleeps, dims=768).embed_query("hello")
    assert info.value.reason == "http_error"
    assert "768" in info.value.message


def test_429_waits_for_retry_after_then_succeeds(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedding_server.queue(429, {"error": "slow down"}, headers={"Retry-After": "7"})
    vector = openai(embedding_server, sleeps).embed_query("hello")
    assert sleeps.waits == [7.0]
    assert len(embedding_server.requests) == 2
    np.testing.assert_allclose(vector, embedding_server.expected(["hello"])[0], atol=1e-6)


def test_500_backs_off_then_succeeds(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedding_server.queue(500, {"error": "boom"})
    ollama(embedding_server, sleeps).embed_query("hello")
    assert sleeps.waits == [0.5]
    assert len(embedding_server.requests) == 2


def test_persistent_503_gives_up_after_four_attempts(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    for _ in range(4):
        embedding_server.queue(503, {"error": "overloaded"})
    with pytest.raises(EmbedderUnavailable) as info:
        ollama(embedding_server, sleeps).embed_query("hello")
    assert info.value.reason == "http_error"
    assert "503" in info.value.message and "overloaded" in info.value.message
    assert sleeps.waits == [0.5, 1.0, 2.0]
    assert len(embedding_server.requests) == 4


def test_long_retry_after_is_capped_at_30_seconds(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedding_server.queue(429, None, headers={"Retry-After": "3600"})
    openai(embedding_server, sleeps).embed_query("hello")
    assert sleeps.waits == [30.0]


def test_401_is_unauthorized_and_never_shows_the_key(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    embedding_server.queue(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    embedder = openai(embedding_server, sleeps)
    with pytest.raises(EmbedderUnavailable) as info:
        embedder.embed_query("hello")
    assert info.value.reason == "unauthorized"
    assert "401" in info.value.message
    shown = [info.value.message, str(info.value), repr(info.value), repr(embedder), caplog.text]
    for text in shown:
        assert KEY not in text
        assert "SECRET" not in text
    assert sleeps.waits == []


def test_403_is_unauthorized(embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder) -> None:
    embedding_server.queue(403, {"error": "forbidden"})
    with pytest.raises(EmbedderUnavailable) as info:
        openai(embedding_server, sleeps).embed_query("hello")
    assert info.value.reason == "unauthorized"


def test_connection_refused_names_the_url(sleeps: SleepRecorder) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(EmbedderUnavailable) as info:
        OllamaEmbedder(url, "nomic-embed-text", sleep=sleeps).embed_query("hello")
    assert info.value.reason == "connection_refused"
    assert f"{url}/api/embed" in info.value.message


def test_ollama_404_model_not_found_is_unknown_model(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    not_found = 'model "nomic-embed-text" not found, try pulling it first'
    embedding_server.queue(404, {"error": not_found})
    with pytest.raises(EmbedderUnavailable) as info:
        ollama(embedding_server, sleeps).embed_query("hello")
    assert info.value.reason == "unknown_model"
    assert "nomic-embed-text" in info.value.message and "ollama pull" in info.value.message


def test_openai_error_saying_model_does_not_exist_is_unknown_model(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedding_server.queue(
        400, {"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}
    )
    with pytest.raises(EmbedderUnavailable) as info:
        openai(embedding_server, sleeps).embed_query("hello")
    assert info.value.reason == "unknown_model"


def test_slow_server_times_out(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedding_server.queue(200, {"embeddings": [[1.0, 0.0]]}, delay_s=1.0)
    with pytest.raises(EmbedderUnavailable) as info:
        ollama(embedding_server, sleeps, timeout=0.2).embed_query("hello")
    assert info.value.reason == "timeout"
    assert embedding_server.url in info.value.message


def test_malformed_json_is_an_http_error(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    embedding_server.queue(200, {"unexpected": True})
    with pytest.raises(EmbedderUnavailable) as info:
        openai(embedding_server, sleeps).embed_query("hello")
    assert info.value.reason == "http_error"


def test_progress_and_cancel_work_per_request(
    embedding_server: FakeEmbeddingServer, sleeps: SleepRecorder
) -> None:
    cancel = threading.Event()
    calls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        cancel.set()

    with pytest.raises(EmbeddingCancelled):
        ollama(embedding_server, sleeps).embed_documents(TEXTS, progress=progress, cancel=cancel)
    assert calls == [(64, 70)]
    assert len(embedding_server.requests) == 1
