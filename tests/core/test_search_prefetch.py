"""A hybrid `cairn search` loads the model's session on a second thread (core.cli.search_prefetch).

The thread may only move work earlier: the query must get the same vector from one
session loaded once, a repeated query (its vector on disk) must load nothing, and a
failure in the thread must reach the user exactly as the search itself reports it.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from core.cli import search_prefetch
from core.providers.embedding import MiniLMEmbedder, onnx_minilm
from core.search import query_vectors
from core.search.search import SearchRequest


class _Engine:
    """What the prefetch asks of an engine: the vaults and each one's embedder."""

    def __init__(self, embedder: object, names: tuple[str, ...] = ("notes",)) -> None:
        self.config = SimpleNamespace(vaults=[SimpleNamespace(name=n) for n in names])
        self._embedder = embedder
        self.asked: list[str] = []

    def embedder_for(self, vc: Any) -> object:
        self.asked.append(vc.name)
        if isinstance(self._embedder, BaseException):
            raise self._embedder
        return self._embedder


def _run(engine: _Engine, request: SearchRequest) -> None:
    thread = search_prefetch.start_prefetch(engine, request)  # type: ignore[arg-type]
    assert thread is not None
    thread.join(timeout=120)
    assert not thread.is_alive()


def test_a_keyword_search_starts_no_thread() -> None:
    engine = _Engine(object())
    assert search_prefetch.start_prefetch(engine, SearchRequest("x", mode="keyword")) is None  # type: ignore[arg-type]
    assert engine.asked == []


def test_the_query_waits_for_the_threads_session_and_gets_the_same_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thread and query race for the session: it is made once, and the vector is the one made without a thread."""
    want = MiniLMEmbedder()
    onnx_minilm.quick_queries()
    try:
        expected = want.embed_query("how do I rotate ssh keys")
        emb = MiniLMEmbedder()
        made: list[str] = []
        real = onnx_minilm.load_session

        def slow_load(*args: Any, **kwargs: Any) -> Any:
            made.append(threading.current_thread().name)
            time.sleep(0.3)  # the query arrives while the thread is still loading
            return real(*args, **kwargs)

        monkeypatch.setattr(onnx_minilm, "load_session", slow_load)
        thread = search_prefetch.start_prefetch(_Engine(emb), SearchRequest("how do I rotate ssh keys"))  # type: ignore[arg-type]
        assert thread is not None
        time.sleep(0.05)
        got = emb.embed_query("how do I rotate ssh keys")
        thread.join(timeout=120)
    finally:
        onnx_minilm.quick_queries(False)
    assert made == ["cairn-search-prefetch"]  # one session, loaded by the thread; the query used it
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_a_repeated_query_loads_no_session(tmp_path: Path) -> None:
    emb = MiniLMEmbedder()
    query_vectors.use_disk_cache(tmp_path)
    try:
        path = query_vectors._disk_path(emb.model_hash, "sourdough starter")
        assert path is not None
        path.write_bytes(np.ones(384, dtype="<f4").tobytes())
        _run(_Engine(emb), SearchRequest("sourdough starter"))
        assert emb._session is None and emb._quick is None
        _run(_Engine(emb), SearchRequest("a query never asked"))
        assert emb._session is not None or emb._quick is not None
    finally:
        query_vectors.use_disk_cache(None)


class _Broken:
    model_hash = "broken-model"

    def __init__(self) -> None:
        self.calls = 0

    def preload_query_session(self) -> None:
        self.calls += 1
        raise RuntimeError("model file is damaged")

    def embed_query(self, text: str) -> np.ndarray:
        self.preload_query_session()
        return np.zeros(384, dtype=np.float32)


def test_a_failure_in_the_thread_is_left_for_the_search_to_report() -> None:
    """The thread swallows its error; the search meets the same error itself, on its own thread."""
    broken = _Broken()
    _run(_Engine(broken), SearchRequest("anything"))
    assert broken.calls == 1
    with pytest.raises(RuntimeError, match="model file is damaged"):
        broken.embed_query("anything")
    engine = _Engine(RuntimeError("config gone"))
    _run(engine, SearchRequest("anything"))
    assert engine.asked == ["notes"]


def test_only_the_vaults_searched_are_warmed() -> None:
    from core.base.models import SearchFilters

    engine = _Engine(object(), names=("a", "b", "c"))
    _run(engine, SearchRequest("x", filters=SearchFilters(vaults=("b",))))
    assert engine.asked == ["b"]


def test_only_a_query_without_its_vector_on_disk_needs_the_model(tmp_path: Path) -> None:
    emb = MiniLMEmbedder()
    query_vectors.use_disk_cache(tmp_path)
    try:
        path = query_vectors._disk_path(emb.model_hash, "sourdough starter")
        assert path is not None
        path.write_bytes(np.ones(384, dtype="<f4").tobytes())
        assert not search_prefetch.needs_model(_Engine(emb), SearchRequest("sourdough starter"))  # type: ignore[arg-type]
        assert search_prefetch.needs_model(_Engine(emb), SearchRequest("a query never asked", mode="semantic"))  # type: ignore[arg-type]
        assert not search_prefetch.needs_model(_Engine(emb), SearchRequest("a query never asked", mode="keyword"))  # type: ignore[arg-type]
        # every vault searched has it (one model, one vector); an engine that cannot say: loaded as for a new query
        assert search_prefetch.needs_model(_Engine(emb, names=("a", "b")), SearchRequest("sourdough starter")) is False  # type: ignore[arg-type]
        assert search_prefetch.needs_model(_Engine(RuntimeError("config gone")), SearchRequest("sourdough starter"))  # type: ignore[arg-type]
    finally:
        query_vectors.use_disk_cache(None)


def test_the_thread_makes_the_session_while_the_query_makes_its_tokenizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prepared session, made on the thread without the GIL, overlaps the query's own tokenizer
    (made on the query's thread while the session is still being made); the full tokenizer is never
    loaded, and the vector is bit for bit the one made without any thread."""
    want = MiniLMEmbedder()
    want.prepare_in(tmp_path / "models")
    expected = want.embed_documents(["how do I rotate ssh keys"])[0]  # also makes the prepared copy
    emb = MiniLMEmbedder()
    emb.prepare_in(tmp_path / "models")
    sessions: list[str] = []
    tokenizers: list[str] = []
    real_session, real_query_tokenizer = onnx_minilm.prepared_session, onnx_minilm.load_query_tokenizer
    session_started = threading.Event()

    def slow_session(*args: Any, **kwargs: Any) -> Any:
        sessions.append(threading.current_thread().name)
        session_started.set()
        time.sleep(0.3)  # the query arrives while the thread is still making it
        return real_session(*args, **kwargs)

    def counted(*args: Any, **kwargs: Any) -> Any:
        tokenizers.append(f"query tokenizer, {threading.current_thread().name}, session made: {emb._session is not None}")
        return real_query_tokenizer(*args, **kwargs)

    def full_tokenizer(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a one-shot query loads no full tokenizer")

    monkeypatch.setattr(onnx_minilm, "prepared_session", slow_session)
    monkeypatch.setattr(onnx_minilm, "load_query_tokenizer", counted)
    monkeypatch.setattr(onnx_minilm, "load_tokenizer", full_tokenizer)
    onnx_minilm.quick_queries()
    try:
        thread = search_prefetch.start_prefetch(_Engine(emb), SearchRequest("how do I rotate ssh keys"))  # type: ignore[arg-type]
        assert thread is not None
        assert session_started.wait(timeout=60)
        got = emb.embed_query("how do I rotate ssh keys")
        thread.join(timeout=120)
    finally:
        onnx_minilm.quick_queries(False)
    assert sessions == ["cairn-search-prefetch"]
    assert tokenizers == [f"query tokenizer, {threading.current_thread().name}, session made: False"]
    np.testing.assert_array_equal(got, expected)


def test_the_switch_interval_is_short_while_the_thread_runs_and_restored_after() -> None:
    seen: list[float] = []

    class _Slow:
        model_hash = "slow-model"

        def preload_query_session(self) -> None:
            seen.append(sys.getswitchinterval())

    before = sys.getswitchinterval()
    _run(_Engine(_Slow()), SearchRequest("anything"))
    assert seen == [search_prefetch.SWITCH_INTERVAL_S] and search_prefetch.SWITCH_INTERVAL_S < before
    assert sys.getswitchinterval() == before
