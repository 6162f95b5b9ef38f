"""A small LRU of query vectors, so repeated and re-typed searches skip the model.

A process that searches once and exits (`cairn search`) can keep them on disk as
well (`use_disk_cache`): a repeated query then loads neither onnxruntime nor the
model, ~0.3 s of a cold hybrid search.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

import numpy as np

from core.base.atomic import write_bytes_atomic


class QueryEmbedder(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


_QUERY_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_QUERY_VECTORS_MAX = 256
_QUERY_VECTORS_LOCK = threading.Lock()
_DISK: list[Path] = []  # the on-disk cache's folder, when one is in use
DISK_MAX = 2000  # files (1.5 KB each with MiniLM); the oldest go first


def use_disk_cache(directory: Path | None) -> None:
    """Keep query vectors in `directory` too (None: memory only). File names are hashes, never query text."""
    _DISK[:] = [] if directory is None else [directory]


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
    path = _disk_path(model, text)
    vector = _read(path) if path is not None else None
    if vector is None:
        vector = np.asarray(embedder.embed_query(text), dtype=np.float32)
        if path is not None:
            _write(path, vector)
    vector.setflags(write=False)  # shared between searches: nobody may change it in place
    with _QUERY_VECTORS_LOCK:
        _QUERY_VECTORS[key] = vector
        while len(_QUERY_VECTORS) > _QUERY_VECTORS_MAX:
            _QUERY_VECTORS.popitem(last=False)
    return vector


def cached_on_disk(model: str, text: str) -> bool:
    """Whether the disk cache holds this query's vector (a repeated query needs no model)."""
    path = _disk_path(model, text)
    return path is not None and path.is_file()


def _disk_path(model: str, text: str) -> Path | None:
    if not _DISK:
        return None
    digest = hashlib.sha256(f"{model}\x1f{text}".encode()).hexdigest()[:40]
    return _DISK[0] / f"{digest}.f32"


def _read(path: Path) -> np.ndarray | None:
    """The stored vector, or None (absent, unreadable or torn: the model is asked again)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data or len(data) % 4:
        return None
    vector = np.frombuffer(data, dtype="<f4").astype(np.float32)
    return vector if np.all(np.isfinite(vector)) else None


def _write(path: Path, vector: np.ndarray) -> None:
    """Store a vector; a full folder loses its oldest files. A cache never fails a search."""
    try:
        write_bytes_atomic(path, vector.astype("<f4").tobytes())
        entries = list(os.scandir(path.parent))
        if len(entries) > DISK_MAX:
            entries.sort(key=lambda e: e.stat().st_mtime_ns)
            for entry in entries[: len(entries) - DISK_MAX]:
                os.unlink(entry.path)
    except OSError:
        pass
