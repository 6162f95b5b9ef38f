"""One vault's semantic side: which chunk has which vector, kept in step with the manifest.

How the vectors are saved and opened again (the usearch file, its JSON record, a
model change, a damaged file) is `core.index.vector_record`; here is what changes
them (a sync, a live edit) and what searches them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.base.models import SearchFilters, chunk_id
from core.index.embed_cache import EmbeddingCache
from core.index.embed_text import NO_VECTOR
from core.index.filters import is_active, record_matches
from core.index.manifest import FileRecord
from core.index.note_vectors import (
    EMBED_GROUP,
    PROVISIONAL,
    NoteTexts,
    embed_note_pass,
    embedding_order,
    is_provisional,
)
from core.index.vector_index import key_for
from core.index.vector_record import ModelIdentity, VectorRecord, VectorStatus, lean_opens

__all__ = ["EmbedStats", "ModelIdentity", "VaultVectors", "VectorStatus", "lean_opens"]


@dataclass(frozen=True, slots=True)
class EmbedStats:
    desired: int
    embedded: int  # chunks sent to the model
    from_cache: int
    removed: int
    seconds: float
    cancelled: bool = False
    skipped: int = 0  # chunks left out: nothing in them for a vector (see `embed_text.vector_worthy`)


class VaultVectors(VectorRecord):
    """Vectors of one vault, with a `status` (see `VectorStatus`)."""

    def __init__(self, directory: Path, vault: str, model: ModelIdentity, cache: EmbeddingCache) -> None:
        super().__init__(directory, model, cache)
        self.vault = vault
        self._mask_cache: tuple[object, np.ndarray] | None = None
        self._keys: dict[tuple[str, int], int] = {}  # (rel_path, ordinal) -> key, hashed once
        self._provisional: tuple[int, int] = (-1, 0)  # (index version, note stand-ins counted then)
        self._load()

    def _key(self, rel: str, ordinal: int) -> int:
        """A chunk's key, remembered: every live update walks all chunks, and hashing 30k ids
        costs ~30 ms while a lookup costs ~3."""
        key = self._keys.get((rel, ordinal))
        if key is None:
            key = self._keys[(rel, ordinal)] = key_for(chunk_id(self.vault, rel, ordinal))
        return key

    @property
    def embedded(self) -> int:
        """Chunks with their own vector: a note's stand-in vector (see `core.index.note_vectors`) is not one."""
        if self._key_hash is None and self._view is not None:
            return self._view.count - self._view.provisional
        if self._provisional[0] != (version := self.index.version):
            self._provisional = (version, sum(1 for h in list(self.key_hash.values()) if is_provisional(h)))
        return len(self.key_hash) - self._provisional[1]

    @property
    def fraction_complete(self) -> float:
        return 1.0 if self.desired == 0 else min(1.0, self.embedded / self.desired)

    def add_rows(self, rows: list[tuple[int, np.ndarray]], hash_of: Callable[[int], str]) -> None:
        """Store vectors under their keys, each with the hash `hash_of(key)` names it by."""
        with self._lock:
            if not rows:
                return
            for k, _ in rows:
                self.key_hash[k] = hash_of(k)
            self.index.add([k for k, _ in rows], np.vstack([v for _, v in rows]))

    def sync(
        self,
        files: dict[str, FileRecord],
        texts_for: Callable[[list[tuple[str, int]]], dict[tuple[str, int], str]],
        embed: Callable[[list[str]], np.ndarray],
        progress: Callable[[int, int, str], None] | None = None,
        cancel: threading.Event | None = None,
        *,
        only: Collection[str] | None = None,
        guard: Callable[[], AbstractContextManager[object]] | None = None,
        current: Callable[[], dict[str, FileRecord]] | None = None,
        note_texts: NoteTexts | None = None,
    ) -> EmbedStats:
        """Make the vectors match `files`: drop stale keys, add missing ones (cache first).

        With `only` (the live path), missing vectors are added for those notes alone: a
        vault whose embedding was never finished is not embedded whole on the first edit.

        With `guard` (the vault's write lock) and `current` (its manifest as it is now),
        the lock is held while a batch is prepared and stored but not while it is
        embedded, so live edits go in between; a chunk whose note changed meanwhile
        (or that a live update already embedded) is dropped from the batch.

        With `note_texts`, a whole-vault sync first gives every note without a vector one short
        stand-in vector, newest first (see `core.index.note_vectors`).
        """
        t0 = time.perf_counter()
        hold = guard or nullcontext
        with hold():
            now = current() if current is not None else files
            wanted, need, from_cache, stale = self._prepare(now, only)
        embedded = 0
        cancelled = False
        if note_texts is not None and only is None:
            notes, cancelled = embed_note_pass(self, wanted, now, note_texts, embed, hold, current, progress, cancel)
            self.dirty = self.dirty or notes > 0
        for start in range(0, len(need) if not cancelled else 0, EMBED_GROUP):
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            group = need[start : start + EMBED_GROUP]
            with hold():
                group = self._still_missing(group, wanted, current)
                refs = [(wanted[k][0], wanted[k][1]) for k in group]
                texts = texts_for(refs) if refs else {}
            keys = [k for k, ref in zip(group, refs) if ref in texts]
            if keys:
                inputs = [texts[(wanted[k][0], wanted[k][1])] for k in keys]
                # Round through f16 now, so a vector read back from the cache equals the one indexed.
                vecs = np.asarray(embed(inputs), dtype=np.float32).astype(np.float16).astype(np.float32)
                with hold():
                    for k, v in zip(keys, vecs):
                        self.cache.put(wanted[k][2], v)  # right for its hash even if the note moved on
                    fresh = set(self._still_missing(keys, wanted, current))
                    rows = [(k, v) for k, v in zip(keys, vecs) if k in fresh]
                    self.add_rows(rows, lambda k: wanted[k][2])
                embedded += len(rows)
            if progress is not None:
                # Counted over the whole vault, not this run: the same share of the vault embedded
                # that search warnings and the status report, so two numbers never disagree.
                progress(len(wanted) - len(need) + min(start + EMBED_GROUP, len(need)), len(wanted), "embedding")
        if stale or from_cache or embedded or self.status not in (VectorStatus.OK, VectorStatus.EMPTY):
            self.dirty = True
        self.status = VectorStatus.OK if len(self.index) else VectorStatus.EMPTY
        return EmbedStats(len(wanted), embedded, from_cache, stale, time.perf_counter() - t0, cancelled, self.skipped)

    def _prepare(self, files: dict[str, FileRecord], only: Collection[str] | None) -> tuple[dict[int, tuple[str, int, str]], list[int], int, int]:
        """Drop stale vectors, add the cached ones; returns (wanted, keys still to embed, from cache, stale)."""
        wanted: dict[int, tuple[str, int, str]] = {}
        self.skipped = 0
        for rel, rec in files.items():
            for c in rec.chunks:
                if c.text_hash.startswith(NO_VECTOR):  # keyword-searchable, but no vector
                    self.skipped += 1
                    continue
                wanted[self._key(rel, c.ordinal)] = (rel, c.ordinal, c.text_hash)
        with self._lock:
            self.desired = len(wanted)
            self._rows_to_chunk = {k: (rel, o) for k, (rel, o, _) in wanted.items()}
            self.rows_from_file = False
            # A note's stand-in vector stays until its passage's own replaces it, unless that passage changed.
            stale = [k for k, h in self.key_hash.items() if k not in wanted or h not in (wanted[k][2], PROVISIONAL + wanted[k][2])]
            self.index.remove(stale)
            for k in stale:
                self.key_hash.pop(k, None)
            scope = None if only is None else set(only)
            missing = [k for k, (rel, _, h) in wanted.items() if self.key_hash.get(k) != h and (scope is None or rel in scope)]
            need: list[int] = []
            cached_keys, cached_vecs = [], []
            for k in missing:
                vec = self.cache.get(wanted[k][2])
                if vec is None:
                    need.append(k)
                else:
                    cached_keys.append(k)
                    cached_vecs.append(vec)
                    self.key_hash[k] = wanted[k][2]
            if cached_keys:
                self.index.add(cached_keys, np.vstack(cached_vecs))
        need.sort(key=embedding_order(wanted, files))
        return wanted, need, len(cached_keys), len(stale)

    def _still_missing(
        self, keys: list[int], wanted: dict[int, tuple[str, int, str]], current: Callable[[], dict[str, FileRecord]] | None
    ) -> list[int]:
        """The keys that still need this vector: not added meanwhile, their note not changed since."""
        if current is None:
            return keys
        now = current()
        out = []
        for k in keys:
            rel, ordinal, text_hash = wanted[k]
            rec = now.get(rel)
            if rec is None or self.key_hash.get(k) == text_hash:
                continue
            if any(c.ordinal == ordinal and c.text_hash == text_hash for c in rec.chunks):
                out.append(k)
        return out

    def bind(self, files: dict[str, FileRecord]) -> None:
        """Learn which key is which chunk from the manifest (after a load, before a search)."""
        with self._lock:
            rows = {}
            skipped = 0
            for rel, rec in list(files.items()):
                for c in rec.chunks:
                    if not c.text_hash.startswith(NO_VECTOR):
                        rows[self._key(rel, c.ordinal)] = (rel, c.ordinal)
                    else:
                        skipped += 1
            self._rows_to_chunk = rows
            self.skipped = skipped
            if not self.desired or self.rows_from_file:
                self.desired = len(rows)
            self.rows_from_file = False

    def search(
        self,
        query: np.ndarray,
        filters: SearchFilters,
        limit: int,
        files: dict[str, FileRecord] | Callable[[], dict[str, FileRecord]],
        restricted: Callable[[], Iterable[str]] | None = None,
    ) -> list[tuple[str, float]]:
        """Top `limit` (chunk id, cosine) pairs the filters allow.

        `files` (the manifest, or a function that reads it) decides the folder, tag, type and
        date filters. Without those, only restricted notes are left out, and `restricted`
        (the chunk ids the keyword index marks restricted, usually none) decides that
        without reading the manifest: ~0.2 s of a cold hybrid `cairn search` on 10k notes.
        """
        with self._lock:
            allowed = None
            keys = self.index.keys()
            if is_active(filters) or (not filters.allow_restricted and restricted is None):
                mask = self._mask(keys, filters, files() if callable(files) else files)
                allowed = None if mask.all() else mask
            elif not filters.allow_restricted and restricted is not None:
                banned = [key_for(cid) for cid in restricted()]
                if banned:
                    mask = ~np.isin(keys, np.asarray(banned, dtype=np.uint64))
                    allowed = None if mask.all() else mask
            found = self.index.search(query, limit, allowed)
            out = []
            for k, score in found:
                ref = self._chunk_ref(k)
                if ref is not None:
                    out.append((chunk_id(self.vault, ref[0], ref[1]), score))
            return out

    def _mask(self, keys: np.ndarray, filters: SearchFilters, files: dict[str, FileRecord]) -> np.ndarray:
        """Rows allowed by the filters, decided once per note rather than once per chunk."""
        cache_key = (filters, self.index.version, id(files), len(files))
        if self._mask_cache is not None and self._mask_cache[0] == cache_key:
            return self._mask_cache[1]
        allowed_rel = {rel for rel, rec in list(files.items()) if record_matches(rel, rec, filters)}
        mask = np.fromiter(
            ((ref := self._rows_to_chunk.get(int(k))) is not None and ref[0] in allowed_rel for k in keys),
            dtype=bool,
            count=len(keys),
        )
        self._mask_cache = (cache_key, mask)
        return mask
