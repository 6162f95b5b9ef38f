"""A vector index on usearch, with exact search where exact is faster.

usearch holds the vectors (cosine, f16 set explicitly: omitting the dtype
gives bf16). Below `exact_below` vectors a numpy matrix product is both exact
and faster than HNSW on this class of machine, so the same vectors are also
kept as a float32 matrix for that path and for filtered searches.

A loaded index makes that matrix only when something needs it (an exact or
filtered search, a change, `vector`): a big vault searched through HNSW alone
never holds the float32 copy (45 MB at 30k chunks) nor pays for reading it out
of usearch on every start (a cold hybrid `cairn search`). The usearch file itself
is mapped, not read, until something changes it (see MAP_ON_LOAD).
"""

from __future__ import annotations

import hashlib
import os
import threading
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
# A loaded file is memory-mapped (usearch's read-only view) rather than copied: opening takes
# ~3 ms instead of ~40 ms, and its pages belong to the OS's file cache instead of the heap
# (~27 MB at 30k chunks). The first change makes a private copy. Not on Windows, where a
# mapped file cannot be replaced, and another Cairn process saves it by replacing it.
MAP_ON_LOAD = os.name != "nt"


def key_for(chunk_id: str) -> int:
    """Stable uint64 key of a chunk id (63 bits, so it also fits signed integers)."""
    return int.from_bytes(hashlib.blake2b(chunk_id.encode("utf-8"), digest_size=8).digest(), "little") & KEY_MASK


class VectorIndex:
    def __init__(self, dims: int, *, exact_below: int = EXACT_BELOW) -> None:
        self.dims = dims
        self.exact_below = exact_below
        self._usearch: Any = None  # made on first add/search: an empty or unused index never loads usearch
        self._mapped = False  # _usearch is a read-only view of a file: copied before the first change
        self._keys = np.zeros(0, dtype=np.uint64)
        # None: not made yet, the vectors are only in usearch (see `_rows`).
        self._matrix: np.ndarray | None = np.zeros((0, dims), dtype=np.float32)
        self._row_of: dict[int, int] | None = {}  # key -> row; None: not made yet, every row of `_keys` is live
        self._materialise = threading.Lock()  # one thread makes the matrix; the others wait for it
        self._row_lock = threading.Lock()
        self.version = 0  # bumped on every change, so callers can cache per-row data

    @property
    def _row(self) -> dict[int, int]:
        """Key -> row, made from `_keys` on first use: a loaded index searched through HNSW never needs it
        (building it for 29k keys cost a cold hybrid `cairn search` 7-10 ms)."""
        row_of = self._row_of
        if row_of is None:
            with self._row_lock:  # a reader making it beside a writer must not replace the writer's
                row_of = self._row_of
                if row_of is None:
                    row_of = self._row_of = {int(k): i for i, k in enumerate(self._keys.tolist())}
        return row_of

    def __len__(self) -> int:
        return len(self._keys) if self._row_of is None else len(self._row_of)

    def __contains__(self, key: int) -> bool:
        return int(key) in self._row

    def keys(self) -> np.ndarray:
        return self._keys[: len(self)].copy()

    def vector(self, key: int) -> np.ndarray | None:
        row = self._row.get(int(key))
        return None if row is None else self._rows()[row].copy()

    def vectors(self, keys: Iterable[int]) -> dict[int, np.ndarray]:
        """The float32 vectors of those `keys` the index holds, without making the matrix for a few.

        Safe beside a writer without the store's lock: a write makes the matrix before it changes
        usearch, and a row read while a vector is replaced gives the old one, never an error.
        """
        matrix = self._matrix
        rows = {int(k): self._row.get(int(k)) for k in keys}
        found = [k for k, row in rows.items() if row is not None]
        if not found:
            return {}
        if matrix is not None:
            return {k: matrix[row].copy() for k, row in rows.items() if row is not None and row < len(matrix)}
        got = self._usearch.get(np.asarray(found, dtype=np.uint64), dtype=np.float32)
        return dict(zip(found, np.asarray(got, dtype=np.float32).reshape(len(found), self.dims)))

    def add(self, keys: Iterable[int], vectors: np.ndarray) -> None:
        """Add or replace vectors (usearch has no update: replace = remove + add)."""
        keys = np.asarray(list(keys), dtype=np.uint64)
        if len(keys) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(keys), self.dims)
        present = [int(k) for k in keys if int(k) in self._row]
        if present:
            self.remove(present)
        matrix = self._rows()  # before the add: usearch must not hold rows the matrix lacks
        self._writable().add(keys, vectors)
        n = len(self)
        matrix = self._grow(n + len(keys))
        self._keys[n : n + len(keys)] = keys
        matrix[n : n + len(keys)] = vectors
        for i, k in enumerate(keys):
            self._row[int(k)] = n + i
        self.version += 1

    def remove(self, keys: Iterable[int]) -> None:
        self.version += 1
        keys = [int(k) for k in keys if int(k) in self._row]
        if not keys:
            return
        matrix = self._rows()
        for key in keys:
            key = int(key)
            row = self._row.pop(key, None)
            if row is None:
                continue
            self._writable().remove(key)
            last = len(self)  # index of the last live row after the pop
            if row != last:
                moved = int(self._keys[last])
                self._keys[row] = moved
                matrix[row] = matrix[last]
                self._row[moved] = row

    def search(self, query: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top `limit` (key, cosine) pairs; `allowed` is a boolean mask over `keys()` rows."""
        n = len(self)
        if n == 0 or limit <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(self.dims)
        if allowed is None and n >= self.exact_below:
            matches = self._hnsw().search(q, min(limit, n))
            return [(int(k), float(1.0 - d)) for k, d in zip(matches.keys, matches.distances)]
        scores = self._rows()[:n] @ q
        if allowed is not None:
            scores = np.where(allowed[:n], scores, -np.inf)
        count = min(limit, n)
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._keys[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]

    def save(self, path: Path) -> None:
        """Write a compacted usearch file (removals don't free space in usearch; a rebuild does)."""
        n = len(self)
        fresh = self._new_usearch()
        if n:
            fresh.add(self._keys[:n], self._rows()[:n])
        fresh.save(str(path))
        self._usearch, self._mapped = fresh, False

    @classmethod
    def load(cls, path: Path, *, exact_below: int = EXACT_BELOW, mapped: bool = MAP_ON_LOAD) -> VectorIndex:
        restored = _usearch_index().restore(str(path), view=mapped)
        if restored is None:
            raise ValueError(f"{path} is not a usearch index")
        vi = cls(restored.ndim, exact_below=exact_below)
        keys = np.asarray(restored.keys, dtype=np.uint64)
        if len(keys):
            vi._usearch, vi._mapped = restored, mapped
            vi._keys = keys.copy()
            vi._matrix = None  # read out of usearch when first needed (see the module docstring)
            vi._row_of = None  # made from the keys when first needed (see `_row`)
        return vi

    def _rows(self) -> np.ndarray:
        """The float32 matrix, row i holding the vector of `_keys[i]`; made from usearch on first use."""
        matrix = self._matrix
        if matrix is None:
            with self._materialise:
                matrix = self._matrix
                if matrix is None:
                    n = len(self)
                    matrix = np.zeros((len(self._keys), self.dims), dtype=np.float32)
                    if n:
                        got = self._usearch.get(self._keys[:n], dtype=np.float32)
                        matrix[:n] = np.asarray(got, dtype=np.float32).reshape(n, self.dims)
                    self._matrix = matrix
        return matrix

    def _grow(self, needed: int) -> np.ndarray:
        """Room for `needed` rows; returns the (possibly new) matrix."""
        matrix = self._rows()
        if needed <= len(self._keys):
            return matrix
        size = max(needed, int(len(self._keys) * 1.5) + 64)
        keys = np.zeros(size, dtype=np.uint64)
        grown = np.zeros((size, self.dims), dtype=np.float32)
        n = len(self)
        keys[:n] = self._keys[:n]
        grown[:n] = matrix[:n]
        self._keys, self._matrix = keys, grown
        return grown

    def _hnsw(self) -> Any:
        if self._usearch is None:
            self._usearch = self._new_usearch()
        return self._usearch

    def _writable(self) -> Any:
        """The usearch index, made a private in-memory copy first if it is a view of a file (~30 ms at 30k)."""
        if self._mapped:
            self._usearch, self._mapped = self._usearch.copy(), False
        return self._hnsw()

    def _new_usearch(self) -> Any:
        return _usearch_index()(ndim=self.dims, metric="cos", dtype="f16", expansion_add=64)
