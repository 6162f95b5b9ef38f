"""The engine: vaults, their indexes and the embedder, behind one object.

The CLI, the desktop app and the tests all drive Cairn through `Engine`;
nothing here knows about Qt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from core.base.config import EngineConfig, VaultConfig, add_vault, load_config, placement_problem, remove_vault, save_config
from core.index.embed_cache import EmbeddingCache
from core.index.embed_text import embedding_input
from core.providers.embedding import Embedder, EmbedderUnavailable, EmbeddingCancelled, create_embedder, default_registry
from core.base.errors import BusyError, IndexNotBuiltError, UsageError
from core.index.indexer import Progress, SyncStats, VaultIndex
from core.index.manifest import FileRecord, IndexInfo
from core.base.models import SearchFilters, SearchResponse
from core.base.paths import AppPaths
from core.search.search import SearchRequest, VaultSearchSide, search
from core.index.vector_store import EmbedStats, ModelIdentity, VaultVectors

EmbedderFactory = Callable[[VaultConfig], Embedder]


@dataclass(frozen=True, slots=True)
class VaultStatus:
    info: IndexInfo
    built: bool
    semantic: str  # ok | empty | missing | model_mismatch | rebuilt | unavailable: REASON | partial
    semantic_fraction: float


@dataclass(frozen=True, slots=True)
class SyncReport:
    keyword: SyncStats
    embedding: EmbedStats | None
    semantic_problem: str | None = None


class _Admission:
    """Bounded concurrent searches: past the bound, a `BusyError` rather than a pile-up."""

    def __init__(self, limit: int) -> None:
        self._sem = threading.BoundedSemaphore(limit)

    def __enter__(self) -> None:
        if not self._sem.acquire(timeout=0.05):
            raise BusyError("Too many searches at once; try again in a moment", retry_after_seconds=0.2)

    def __exit__(self, *exc: object) -> None:
        self._sem.release()


def default_embedder_factory(vault: VaultConfig) -> Embedder:
    from core.providers.secrets import lookup_key

    info = default_registry().get(vault.embedder)
    key = lookup_key(info.id, info.key_env_var) if info is not None and info.needs_key else None
    return create_embedder(vault.embedder, model=vault.embed_model, base_url=vault.embed_base_url, api_key=key)


class Engine:
    def __init__(
        self,
        paths: AppPaths,
        config: EngineConfig | None = None,
        *,
        embedder_factory: EmbedderFactory | None = default_embedder_factory,
        max_concurrent_searches: int = 4,
    ) -> None:
        self.paths = paths
        paths.ensure()
        self.config = config if config is not None else load_config(paths)
        self._embedder_factory = embedder_factory
        self._indexes: dict[str, VaultIndex] = {}
        self._vectors: dict[str, VaultVectors] = {}
        self._embedders: dict[tuple[str, str | None, str | None], Embedder] = {}
        self._semantic_problem: dict[str, str] = {}
        self._lock = threading.RLock()
        self._write_locks: dict[str, threading.RLock] = {}
        self._admission = _Admission(max_concurrent_searches)
        self.child_sync_problem: str | None = None  # why the last bulk index ran in-process

    # -- vaults ----------------------------------------------------------------------------

    @property
    def vaults(self) -> tuple[VaultConfig, ...]:
        return self.config.vaults

    def add_vault(self, root: Path, name: str | None = None) -> VaultConfig:
        if not Path(root).is_dir():
            raise UsageError(f"{root} is not a folder")
        with self._lock:
            problem = placement_problem(self.config, Path(root), self.paths.data_dir)
            if problem is not None:
                raise UsageError(problem)
            self.config, vc = add_vault(self.config, Path(root), name)
            save_config(self.paths, self.config)
            return vc

    def remove_vault(self, name: str) -> None:
        with self._lock:
            vi = self._indexes.pop(name, None)
            if vi is not None:
                vi.close()
            self._vectors.pop(name, None)
            self.config = remove_vault(self.config, name)
            save_config(self.paths, self.config)

    def update_config(self, config: EngineConfig) -> None:
        with self._lock:
            self.config = config
            save_config(self.paths, config)

    def vault(self, name: str) -> VaultConfig:
        vc = self.config.vault_named(name)
        if vc is None:
            known = ", ".join(v.name for v in self.config.vaults) or "none"
            raise UsageError(f"No vault named {name!r} (known: {known}). Add it with `cairn index --vault PATH`.")
        return vc

    def index_for(self, name: str) -> VaultIndex:
        with self._lock:
            vi = self._indexes.get(name)
            if vi is None:
                vi = VaultIndex(self.vault(name), self.paths, self.config)
                self._indexes[name] = vi
            return vi

    def write_lock(self, name: str) -> threading.RLock:
        """One writer per vault: a full sync, a live update and a flush never interleave."""
        with self._lock:
            return self._write_locks.setdefault(name, threading.RLock())

    # -- semantic side ---------------------------------------------------------------------

    def embedder_for(self, vc: VaultConfig) -> Embedder | None:
        """The vault's embedder, or None with the reason kept in `semantic_problem`."""
        if self._embedder_factory is None:
            self._semantic_problem[vc.name] = "semantic search is turned off"
            return None
        key = (vc.embedder, vc.embed_model, vc.embed_base_url)
        with self._lock:
            emb = self._embedders.get(key)
            if emb is None:
                try:
                    emb = self._embedder_factory(vc)
                    _ = emb.model_hash  # verifies the model file now, not mid-search
                except EmbedderUnavailable as exc:
                    self._semantic_problem[vc.name] = f"{exc.reason}: {exc}"
                    return None
                self._embedders[key] = emb
            self._semantic_problem.pop(vc.name, None)
            return emb

    def warm_up(self) -> None:
        """Load each vault's embedding model and embed one query, so the first real search is fast.

        The ONNX session's first run allocates its buffers (~0.35 s cold start);
        the app calls this on its query thread at start-up. A vault whose
        embedder is unavailable is skipped (its reason is kept as usual).
        """
        seen: set[int] = set()
        for vc in self.config.vaults:
            emb = self.embedder_for(vc)
            if emb is None or id(emb) in seen:
                continue
            seen.add(id(emb))
            try:
                emb.embed_query("warm up")
            except Exception:  # noqa: BLE001 - a warm-up never fails the app; the search reports the problem
                continue

    def vectors_for(self, name: str) -> VaultVectors | None:
        with self._lock:
            vv = self._vectors.get(name)
            if vv is not None:
                return vv
            vc = self.vault(name)
            emb = self.embedder_for(vc)
            if emb is None:
                return None
            model = ModelIdentity(emb.model_id, emb.model_hash, emb.dims)
            cache = EmbeddingCache(self.paths.cache_dir / "embeddings", model.model_hash, model.dims)
            vi = self.index_for(name)
            vv = VaultVectors(vi.dir, name, model, cache)
            if vi.recovery is not None and vv.status == "ok":
                vv.dirty = True  # the vector file may predate the crash: save after reconciling
            vv.bind(self._embeddable_files(vc, vi.files))
            self._vectors[name] = vv
            return vv

    def semantic_problem(self, name: str) -> str | None:
        return self._semantic_problem.get(name)

    # -- indexing --------------------------------------------------------------------------

    def sync(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        embed: bool = True,
        bulk_in_child: bool = False,
    ) -> list[SyncReport]:
        """Keyword index first (search works at once), then embeddings in batches.

        With `bulk_in_child`, a vault with no index yet is built in a child process
        (core.index.child_sync) so a UI thread in this process never waits on Whoosh.
        """
        reports = []
        for name in names or [v.name for v in self.config.vaults]:
            with self.write_lock(name):
                vi = self.index_for(name)
                kw = self._bulk_in_child(name, progress, cancel) if bulk_in_child and not vi.files else None
                if kw is None:
                    vi = self.index_for(name)
                    kw = vi.sync(progress=progress, cancel=cancel)
                emb_stats = None
                if embed and not kw.cancelled:
                    emb_stats = self.embed_vault(name, progress=progress, cancel=cancel)
            reports.append(SyncReport(kw, emb_stats, self.semantic_problem(name)))
        return reports

    def _bulk_in_child(self, name: str, progress: Progress | None, cancel: threading.Event | None) -> SyncStats | None:
        from core.index.child_sync import ChildSyncError, gc_paused, sync_keyword_in_child

        try:
            stats = sync_keyword_in_child(self.paths.data_dir, self.config, name, progress=progress, cancel=cancel)
        except ChildSyncError as exc:
            self.child_sync_problem = str(exc)
            logging.getLogger(__name__).warning("indexing %s in-process: %s", name, exc)
            return None  # index in this process instead; slower for the UI, never wrong
        self.child_sync_problem = None
        with self._lock:  # the child wrote manifest and index: open them afresh
            old = self._indexes.pop(name, None)
            self._vectors.pop(name, None)
        if old is not None:
            old.close()
        with gc_paused():  # reopening allocates ~10 objects a note (see core.index.child_sync)
            self.index_for(name)
            self.vectors_for(name)
        return stats

    def update_notes(self, name: str, rel_paths: Sequence[str]) -> SyncReport:
        """The live fast path: re-index these notes in memory, searchable at once.

        The keyword index commits (Whoosh is on disk), new embeddings go to the
        cache, but the manifest and vector file wait for `flush()`; the dirty
        flag on disk makes a crash in between recoverable.
        """
        with self.write_lock(name):
            kw = self.index_for(name).update_paths(rel_paths, persist=False)
            emb = None
            if kw.changed_paths or kw.removed_paths:
                emb = self.embed_vault(name, persist=False, only=kw.changed_paths)
            return SyncReport(kw, emb, self.semantic_problem(name))

    def flush(self, names: Sequence[str] | None = None) -> None:
        """Persist everything the live path holds in memory; clears the dirty flags."""
        for name in names or list(self._indexes):
            with self.write_lock(name):
                vi = self._indexes.get(name)
                if vi is None:
                    continue
                vv = self._vectors.get(name)
                if vv is not None and vv.dirty:
                    vv.save()
                if vi.is_dirty:
                    vi.flush()

    def is_dirty(self, name: str) -> bool:
        vi = self._indexes.get(name)
        vv = self._vectors.get(name)
        return bool((vi is not None and vi.is_dirty) or (vv is not None and vv.dirty))

    def embed_vault(
        self,
        name: str,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        persist: bool = True,
        only: Sequence[str] | None = None,
    ) -> EmbedStats | None:
        """Bring the vault's vectors in step with its manifest; `only`: embed just these notes."""
        vv = self.vectors_for(name)
        if vv is None:
            return None
        vc = self.vault(name)
        emb = self.embedder_for(vc)
        assert emb is not None
        vi = self.index_for(name)
        files = self._embeddable_files(vc, vi.files)

        def texts_for(refs: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
            ids = {f"{name}\x1f{rel}\x1f{o}": (rel, o) for rel, o in refs}
            stored = vi.keyword.stored(ids)
            out = {}
            for cid, fields in stored.items():
                rel, o = ids[cid]
                rec = files.get(rel)
                if rec is not None:
                    out[(rel, o)] = embedding_input(rec.title, fields.get("heading_path", ""), fields.get("body", ""))
            return out

        try:
            stats = vv.sync(files, texts_for, lambda texts: emb.embed_documents(texts), progress, cancel, only=only)
        except EmbeddingCancelled:
            stats = EmbedStats(vv.desired, 0, 0, 0, 0.0, cancelled=True)
        except EmbedderUnavailable as exc:
            self._semantic_problem[name] = f"{exc.reason}: {exc}"
            stats = None
        if persist and vv.dirty:
            vv.save()  # an unchanged vault rewrites nothing
        elif not persist:
            vv.cache.flush()  # cheap append: a crash before the next flush re-embeds nothing
        return stats

    def _embeddable_files(self, vc: VaultConfig, files: dict[str, FileRecord]) -> dict[str, FileRecord]:
        """Restricted notes never leave the machine: a remote embedder does not see them."""
        info = default_registry().get(vc.embedder)
        if info is not None and info.remote:
            return {rel: rec for rel, rec in files.items() if rec.confidentiality != "restricted"}
        return files

    # -- search ----------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResponse:
        with self._admission:
            sides = [self._side(v.name) for v in self.config.vaults]
            if not any(s is not None for s in sides):
                built = [v.name for v in self.config.vaults if self.index_for(v.name).is_built]
                if not built:
                    stale = [v.name for v in self.config.vaults if self.index_for(v.name).recovery == "outdated"]
                    if stale:
                        raise IndexNotBuiltError(
                            f"The index of {', '.join(stale)} was built by an older version of Cairn — run `cairn index` to rebuild it"
                        )
                    raise IndexNotBuiltError("No index yet — run `cairn index --vault PATH` (or press Index in the app)")
            return search(request, [s for s in sides if s is not None])

    def _side(self, name: str) -> VaultSearchSide | None:
        vi = self.index_for(name)
        if not vi.is_built:
            return None
        vv = self.vectors_for(name)
        emb = self.embedder_for(self.vault(name)) if vv is not None else None
        if vv is None or len(vv.index) == 0:
            reason = self.semantic_problem(name) or ("vector index " + (vv.status if vv else "missing"))
            return VaultSearchSide(name, vi.keyword, unavailable_reason=reason)
        note = None
        if vv.fraction_complete < 1.0:
            note = f"semantic index {int(vv.fraction_complete * 100)}% complete"
        files = vi.files
        searcher = _BoundVectors(vv, files)
        return VaultSearchSide(name, vi.keyword, searcher, emb, semantic_note=note)

    def similar(self, name: str, rel_path: str, k: int = 10) -> list[tuple[str, str, float]]:
        """Other notes nearest to this one by meaning (see core.search.similar)."""
        from core.search.similar import similar_notes

        return similar_notes(self.index_for(name), self.vectors_for(name), name, rel_path, k)

    # -- status ----------------------------------------------------------------------------

    def status(self) -> list[VaultStatus]:
        out = []
        for v in self.config.vaults:
            vi = self.index_for(v.name)
            vv = self.vectors_for(v.name)
            if vv is None:
                semantic = f"unavailable: {self.semantic_problem(v.name) or 'unknown'}"
                fraction = 0.0
            else:
                vv.desired = vv.desired or sum(len(r.chunks) for r in self._embeddable_files(v, vi.files).values())
                fraction = vv.fraction_complete
                semantic = vv.status if fraction >= 1.0 or vv.status != "ok" else "partial"
            out.append(VaultStatus(vi.info if vi.is_built else replace(vi.info, state="not built"), vi.is_built, semantic, fraction))
        return out

    def close(self) -> None:
        with self._lock:
            for vi in self._indexes.values():
                vi.close()
            self._indexes.clear()


class _BoundVectors:
    """A vault's vectors bound to its manifest records, as `search` expects."""

    def __init__(self, vectors: VaultVectors, files: dict[str, FileRecord]) -> None:
        self._vectors = vectors
        self._files = files

    def search(self, query: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        return self._vectors.search(query, filters, limit, self._files)
