"""A vector index on usearch, with exact search where exact is faster.

usearch holds the vectors (cosine, f16 set explicitly: omitting the dtype
gives bf16). Below `exact_below` vectors a numpy matrix product is both exact
and faster than HNSW on this class of machine, so the same vectors are also
kept as a float32 matrix for that path and for filtered searches.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from core.base.native import load_usearch


def _usearch_index() -> Any:
    """usearch's `Index` class, imported on first use: a keyword-only search never loads usearch (or onnxruntime)."""
    return load_usearch().Index  # usearch ships no type information


EXACT_BELOW = 10_000
KEY_MASK = (1 << 63) - 1


def key_for(chunk_id: str) -> int:
    """Stable uint64 key of a chunk id (63 bits, so it also fits signed integers)."""
    return int.from_bytes(hashlib.blake2b(chunk_id.encode("utf-8"), digest_size=8).digest(), "little") & KEY_MASK


class VectorIndex:
    def __init__(self, dims: int, *, exact_below: int = EXACT_BELOW) -> None:
        self.dims = dims
        self.exact_below = exact_below
        self._usearch: Any = None  # made on first add/search: an empty or unused index never loads usearch
        self._keys = np.zeros(0, dtype=np.uint64)
        self._matrix = np.zeros((0, dims), dtype=np.float32)
        self._row: dict[int, int] = {}
        self.version = 0  # bumped on every change, so callers can cache per-row data

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, key: int) -> bool:
        return int(key) in self._row

    def keys(self) -> np.ndarray:
        return self._keys[: len(self._row)].copy()

    def vector(self, key: int) -> np.ndarray | None:
        row = self._row.get(int(key))
        return None if row is None else self._matrix[row].copy()

    def add(self, keys: Iterable[int], vectors: np.ndarray) -> None:
        """Add or replace vectors (usearch has no update: replace = remove + add)."""
        keys = np.asarray(list(keys), dtype=np.uint64)
        if len(keys) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(keys), self.dims)
        present = [int(k) for k in keys if int(k) in self._row]
        if present:
            self.remove(present)
        self._hnsw().add(keys, vectors)
        n = len(self._row)
        self._grow(n + len(keys))
        self._keys[n : n + len(keys)] = keys
        self._matrix[n : n + len(keys)] = vectors
        for i, k in enumerate(keys):
            self._row[int(k)] = n + i
        self.version += 1

    def remove(self, keys: Iterable[int]) -> None:
        self.version += 1
        for key in keys:
            key = int(key)
            row = self._row.pop(key, None)
            if row is None:
                continue
            self._hnsw().remove(key)
            last = len(self._row)  # index of the last live row after the pop
            if row != last:
                moved = int(self._keys[last])
                self._keys[row] = moved
                self._matrix[row] = self._matrix[last]
                self._row[moved] = row

    def search(self, query: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top `limit` (key, cosine) pairs; `allowed` is a boolean mask over `keys()` rows."""
        n = len(self._row)
        if n == 0 or limit <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(self.dims)
        if allowed is None and n >= self.exact_below:
            matches = self._hnsw().search(q, min(limit, n))
            return [(int(k), float(1.0 - d)) for k, d in zip(matches.keys, matches.distances)]
        scores = self._matrix[:n] @ q
        if allowed is not None:
            scores = np.where(allowed[:n], scores, -np.inf)
        count = min(limit, n)
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._keys[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]

    def save(self, path: Path) -> None:
        """Write a compacted usearch file (removals don't free space in usearch; a rebuild does)."""
        n = len(self._row)
        fresh = self._new_usearch()
        if n:
            fresh.add(self._keys[:n], self._matrix[:n])
        fresh.save(str(path))
        self._usearch = fresh

    @classmethod
    def load(cls, path: Path, *, exact_below: int = EXACT_BELOW) -> VectorIndex:
        restored = _usearch_index().restore(str(path))
        if restored is None:
            raise ValueError(f"{path} is not a usearch index")
        vi = cls(restored.ndim, exact_below=exact_below)
        keys = np.asarray(restored.keys, dtype=np.uint64)
        if len(keys):
            vectors = np.vstack(restored.get(keys, dtype=np.float32)).astype(np.float32)
            vi._usearch = restored
            vi._grow(len(keys))
            vi._keys[: len(keys)] = keys
            vi._matrix[: len(keys)] = vectors
            vi._row = {int(k): i for i, k in enumerate(keys)}
        return vi

    def _grow(self, needed: int) -> None:
        if needed <= len(self._keys):
            return
        size = max(needed, int(len(self._keys) * 1.5) + 64)
        keys = np.zeros(size, dtype=np.uint64)
        matrix = np.zeros((size, self.dims), dtype=np.float32)
        n = len(self._row)
        keys[:n] = self._keys[:n]
        matrix[:n] = self._matrix[:n]
        self._keys, self._matrix = keys, matrix

    def _hnsw(self) -> Any:
        if self._usearch is None:
            self._usearch = self._new_usearch()
        return self._usearch

    def _new_usearch(self) -> Any:
        return _usearch_index()(ndim=self.dims, metric="cos", dtype="f16", expansion_add=64)
