"""How a vault's vectors are kept on disk and opened again: the base of `VaultVectors`.

Vectors are persisted as a usearch file plus a JSON record (`vectors.json`) that names the
embedding model (id, file hash, dims), the checksum of the usearch file, each vector's key
with the hash of the text it embeds, and which chunk each key is. A model change is
reported as `model_mismatch` and the vault re-embeds; a corrupted file is rebuilt from the
embedding cache without re-embedding. A process that only searches can open the record's
compact view instead (`lean_opens`, `core.index.vector_view`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np

from core.base.atomic import write_json_atomic
from core.index.embed_cache import EmbeddingCache
from core.index.vector_checksum import checksum_matches, file_sha256
from core.index.vector_index import VectorIndex
from core.index.vector_view import RecordView, keep_view, read_record, read_view

_LEAN = [False]  # see lean_opens


def lean_opens(enabled: bool = True) -> None:
    """Open vector files from their search view (`core.index.vector_view`), for a process that searches and exits.

    The record itself (every vector's text hash) is read only if something asks for it. Not for a
    long-lived process: there the record read later could be a newer one than the vectors loaded.
    """
    _LEAN[0] = enabled


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    model_id: str
    model_hash: str
    dims: int


class VectorStatus(StrEnum):
    """The state of a vault's vector file when it was opened or last synced."""

    OK = "ok"
    EMPTY = "empty"  # synced, but nothing to embed
    MISSING = "missing"  # no vector file yet
    MODEL_MISMATCH = "model_mismatch"  # made by another model: re-embedded on the next sync
    REBUILT = "rebuilt"  # a torn or corrupted file, restored from the embedding cache


class VectorRecord:
    """The record side of `VaultVectors`: its fields, saving, and opening (the whole record or its view)."""

    def __init__(self, directory: Path, model: ModelIdentity, cache: EmbeddingCache) -> None:
        self.directory = directory
        self.model = model
        self.cache = cache
        self.index = VectorIndex(model.dims)
        self._key_hash: dict[int, str] | None = {}  # None: opened from the view, the record not read yet
        self._view: RecordView | None = None
        self._rows_map: dict[int, tuple[str, int]] | None = {}  # None: still only in `_view`
        self._lock = threading.RLock()
        self.desired = 0
        self.skipped = 0  # chunks of the last sync left without a vector on purpose
        self.status = VectorStatus.MISSING
        self.dirty = False  # memory differs from the vector file
        self.rows_from_file = False  # `_rows_to_chunk` came with the vector file: no manifest needed to search
        self.saved_chunks = -1  # desired + skipped when the file was saved: the vault's chunk count then

    @property
    def key_hash(self) -> dict[int, str]:
        """Each vector's key -> the hash of the text it embeds (the record, read when first needed after a lean open)."""
        key_hash = self._key_hash
        if key_hash is None:
            with self._lock:
                if self._key_hash is None:
                    try:
                        meta, _ = read_record(self.directory)
                        self._key_hash = {int(k): str(h) for k, h in meta.get("keys", {}).items()}
                    except (OSError, ValueError, TypeError, AttributeError):
                        self._key_hash = {}
                key_hash = self._key_hash
        return key_hash

    @key_hash.setter
    def key_hash(self, value: dict[int, str]) -> None:
        self._key_hash = value

    @property
    def _rows_to_chunk(self) -> dict[int, tuple[str, int]]:
        rows = self._rows_map
        if rows is None:
            with self._lock:
                if self._rows_map is None:
                    self._rows_map = self._view.rows() if self._view is not None else {}
                rows = self._rows_map
        return rows

    @_rows_to_chunk.setter
    def _rows_to_chunk(self, value: dict[int, tuple[str, int]]) -> None:
        self._rows_map = value

    def _chunk_ref(self, key: int) -> tuple[str, int] | None:
        if self._rows_map is None and self._view is not None:
            return self._view.chunk_of(key)  # a hit's chunk without making the dict of all 29k
        return self._rows_to_chunk.get(key)

    @property
    def index_path(self) -> Path:
        return self.directory / "vectors.usearch"

    @property
    def manifest_path(self) -> Path:
        return self.directory / "vectors.json"

    def save(self) -> None:
        # The cache first: if the vector file is found torn later, it is rebuilt from the cache,
        # which must already hold every vector the file names.
        self.cache.flush()
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = self.index_path.with_suffix(".usearch.tmp")
            self.index.save(tmp)
            digest = file_sha256(tmp)
            tmp.replace(self.index_path)
            meta: dict[str, object] = {
                "model_id": self.model.model_id,
                "model_hash": self.model.model_hash,
                "dims": self.model.dims,
                "count": len(self.index),
                "usearch_sha256": digest,
                "keys": {str(k): h for k, h in self.key_hash.items()},
            }
            rows = [self._rows_to_chunk.get(k) for k in self.key_hash]
            if self.desired and all(r is not None for r in rows):
                # Which chunk each key is (keys are hashes of chunk ids): a search can then map its
                # hits without reading the manifest. Valid while the vault still has as many chunks.
                meta["rows"] = [[rel, ordinal] for rel, ordinal in rows]  # type: ignore[misc]
                meta["desired"] = self.desired
                meta["chunks"] = self.desired + self.skipped
            write_json_atomic(self.manifest_path, meta, compact=True)
            self.dirty = False

    def _load(self) -> None:
        if _LEAN[0] and self._open_view():
            return
        try:
            meta, stamp = read_record(self.directory)
        except (OSError, ValueError):
            self.status = VectorStatus.MISSING
            return
        if _LEAN[0] and meta.get("model_hash") == self.model.model_hash:
            keep_view(self.directory, meta, stamp)  # the next lean open reads that instead
        if meta.get("model_hash") != self.model.model_hash or int(meta.get("dims", -1)) != self.model.dims:
            self.status = VectorStatus.MODEL_MISMATCH
            return
        key_hash = {int(k): str(h) for k, h in meta.get("keys", {}).items()}
        try:
            if not checksum_matches(self.index_path, meta.get("usearch_sha256")):
                raise ValueError("checksum mismatch")
            self.index = VectorIndex.load(self.index_path)
            self.key_hash = key_hash
            self.status = VectorStatus.OK
            self._load_rows(meta)
        except (OSError, ValueError, RuntimeError):
            self._rebuild_from_cache(key_hash)

    def _open_view(self) -> bool:
        """Open from the record's view (see `lean_opens`); False when there is none, or anything disagrees."""
        view = read_view(self.directory)
        if view is None or view.model_hash != self.model.model_hash or view.dims != self.model.dims:
            return False
        try:
            if not checksum_matches(self.index_path, view.usearch_sha256):
                return False
            index = VectorIndex.load(self.index_path)
        except (OSError, ValueError, RuntimeError):
            return False  # read again the long way, which rebuilds what is damaged
        self.index, self._view, self._key_hash, self.status = index, view, None, VectorStatus.OK
        if view.paths and view.desired is not None and view.chunks is not None:
            self._rows_map = None  # looked up in the view (see `_chunk_ref`)
            self.desired, self.saved_chunks, self.rows_from_file = view.desired, view.chunks, True
        return True

    def _load_rows(self, meta: dict[str, object]) -> None:
        """Which chunk each key is, as saved with the file (see `save`); absent in older files."""
        rows, chunks, desired = meta.get("rows"), meta.get("chunks"), meta.get("desired")
        if not isinstance(rows, list) or len(rows) != len(self.key_hash) or not isinstance(chunks, int) or not isinstance(desired, int):
            return
        try:
            self._rows_to_chunk = {k: (str(rel), int(o)) for k, (rel, o) in zip(self.key_hash, rows)}
        except (TypeError, ValueError):
            self._rows_to_chunk = {}
            return
        self.desired = desired  # until `bind` or a sync counts the vault's chunks again
        self.saved_chunks = chunks
        self.rows_from_file = True

    def _rebuild_from_cache(self, key_hash: dict[int, str]) -> None:
        """A torn or corrupted vector file: restore every vector the cache still holds."""
        keys, vecs = [], []
        for k, h in key_hash.items():
            vec = self.cache.get(h)
            if vec is not None:
                keys.append(k)
                vecs.append(vec)
                self.key_hash[k] = h
        if keys:
            self.index.add(keys, np.vstack(vecs))
        self.status = VectorStatus.REBUILT
