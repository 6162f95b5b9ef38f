"""A small LRU of query vectors, so repeated and re-typed searches skip the model."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol

import numpy as np


class QueryEmbedder(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


_QUERY_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_QUERY_VECTORS_MAX = 256
_QUERY_VECTORS_LOCK = threading.Lock()


def embed_query_cached(embedder: QueryEmbedder, text: str) -> np.ndarray:
    """The query's vector, from a small LRU keyed by the model's identity and the text.

    Typing, deleting and retyping, paging through modes or re-running a search
    asks for the same vector again; a model call costs 4-30 ms, a hit nothing.
    An embedder without a ``model_hash`` is not cached (its identity is unknown).
    """
    model = getattr(embedder, "model_hash", None)
    if not isinstance(model, str):
        return embedder.embed_query(text)
    key = (model, text)
    with _QUERY_VECTORS_LOCK:
        cached = _QUERY_VECTORS.get(key)
        if cached is not None:
            _QUERY_VECTORS.move_to_end(key)
            return cached
    vector = embedder.embed_query(text)
    vector.setflags(write=False)  # shared between searches: nobody may change it in place
    with _QUERY_VECTORS_LOCK:
        _QUERY_VECTORS[key] = vector
        while len(_QUERY_VECTORS) > _QUERY_VECTORS_MAX:
            _QUERY_VECTORS.popitem(last=False)
    return vector
