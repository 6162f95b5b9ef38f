"""The query-vector LRU: one model call per (model, text), none shared across models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.search.query_vectors import embed_query_cached, use_disk_cache


class CountingEmbedder:
    def __init__(self, model_hash: str | None) -> None:
        if model_hash is not None:
            self.model_hash = model_hash
        self.calls = 0

    def embed_query(self, text: str) -> np.ndarray:
        self.calls += 1
        return np.array([float(len(text)), float(self.calls)], dtype=np.float32)


def test_a_repeated_query_is_embedded_once_per_model() -> None:
    a, b = CountingEmbedder("lru-test-a"), CountingEmbedder("lru-test-b")
    first = embed_query_cached(a, "sourdough rest")
    assert embed_query_cached(a, "sourdough rest") is first and a.calls == 1
    embed_query_cached(b, "sourdough rest")
    assert b.calls == 1  # another model never gets a's vector
    with pytest.raises(ValueError):
        first[0] = 0.0  # shared between searches, so read-only


def test_an_embedder_without_identity_is_not_cached() -> None:
    anon = CountingEmbedder(None)
    embed_query_cached(anon, "x")
    embed_query_cached(anon, "x")
    assert anon.calls == 2


def test_the_disk_cache_serves_a_query_asked_in_an_earlier_process(tmp_path: Path) -> None:
    from core.search import query_vectors

    folder = tmp_path / "qv"
    use_disk_cache(folder)
    try:
        first = CountingEmbedder("disk-test")
        vec = embed_query_cached(first, "backup schedule")
        files = list(folder.iterdir())
        assert len(files) == 1 and b"backup" not in files[0].name.encode()  # named by hash, not by text
        query_vectors._QUERY_VECTORS.clear()  # a new process: the memory LRU is empty
        later = CountingEmbedder("disk-test")
        np.testing.assert_array_equal(embed_query_cached(later, "backup schedule"), vec)
        assert later.calls == 0
        other = CountingEmbedder("disk-test-other-model")
        embed_query_cached(other, "backup schedule")
        assert other.calls == 1  # another model's vector is never served
        files[0].write_bytes(b"\x00\x00")  # torn: asked of the model again
        query_vectors._QUERY_VECTORS.clear()
        again = CountingEmbedder("disk-test")
        embed_query_cached(again, "backup schedule")
        assert again.calls == 1
    finally:
        use_disk_cache(None)


def test_the_disk_cache_keeps_at_most_disk_max_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.search import query_vectors

    monkeypatch.setattr(query_vectors, "DISK_MAX", 3)
    use_disk_cache(tmp_path)
    try:
        emb = CountingEmbedder("disk-max-test")
        for i in range(6):
            embed_query_cached(emb, f"query {i}")
        assert len(list(tmp_path.iterdir())) == 3
    finally:
        use_disk_cache(None)
