"""Embeddings remembered by (model hash, chunk text hash).

A restart, a re-chunk that leaves text unchanged, or a corrupted vector file
never costs a re-embedding: the vector is looked up here first. The cache is
append-only segments (`.npz`), so a flush writes only what is new.
"""

from __future__ import annotations

import io
import threading
import zipfile
from pathlib import Path

import numpy as np

from core.base.atomic import write_bytes_atomic

COMPACT_AFTER_SEGMENTS = 32


class EmbeddingCache:
    def __init__(self, directory: Path, model_hash: str, dims: int) -> None:
        self.directory = directory / model_hash[:24]
        self.dims = dims
        self._vectors: dict[str, np.ndarray] = {}
        self._pending: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._load()

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, text_hash: str) -> np.ndarray | None:
        vec = self._vectors.get(text_hash)
        if vec is None:
            self.misses += 1
        else:
            self.hits += 1
        return vec

    def put(self, text_hash: str, vector: np.ndarray) -> None:
        vec = np.asarray(vector, dtype=np.float32).reshape(self.dims)
        with self._lock:
            if text_hash not in self._vectors:
                self._vectors[text_hash] = vec
                self._pending[text_hash] = vec

    @property
    def dirty(self) -> bool:
        return bool(self._pending)

    def flush(self) -> None:
        with self._lock:
            if not self._pending:
                return
            pending, self._pending = self._pending, {}
        self.directory.mkdir(parents=True, exist_ok=True)
        segments = sorted(self.directory.glob("seg-*.npz"))
        if len(segments) >= COMPACT_AFTER_SEGMENTS:
            self._write_segment(self.directory / "seg-000000.npz", self._vectors)
            for seg in segments:
                if seg.name != "seg-000000.npz":
                    seg.unlink(missing_ok=True)
            return
        number = int(segments[-1].stem.split("-")[1]) + 1 if segments else 1
        self._write_segment(self.directory / f"seg-{number:06d}.npz", pending)

    def _write_segment(self, path: Path, vectors: dict[str, np.ndarray]) -> None:
        hashes = np.array(list(vectors), dtype="U64")
        matrix = np.vstack(list(vectors.values())).astype(np.float16) if vectors else np.zeros((0, self.dims), np.float16)
        buf = io.BytesIO()
        np.savez(buf, hashes=hashes, vectors=matrix)
        write_bytes_atomic(path, buf.getvalue())

    def _load(self) -> None:
        if not self.directory.is_dir():
            return
        for seg in sorted(self.directory.glob("seg-*.npz")):
            try:
                with np.load(seg, allow_pickle=False) as data:
                    hashes, matrix = data["hashes"], data["vectors"].astype(np.float32)
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                seg.unlink(missing_ok=True)  # a torn segment: its vectors are simply re-embedded
                continue
            if matrix.shape[1:] != (self.dims,):
                continue
            for h, v in zip(hashes, matrix):
                self._vectors[str(h)] = v
