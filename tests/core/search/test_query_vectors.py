"""The query-vector LRU: one model call per (model, text), none shared across models."""

from __future__ import annotations

import numpy as np
import pytest

from core.search.query_vectors import embed_query_cached


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
