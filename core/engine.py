"""The engine: vaults, their indexes and the embedder, behind one object.

The CLI, the desktop app and the tests all drive Cairn through `Engine`;
nothing here knows about Qt. The vault list, open indexes and writer locks are
kept by a `core.engine_vaults.VaultRegistry` the engine holds (`engine.registry`);
the engine answers its vault questions through it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.base.config import EngineConfig, VaultConfig
from core.base.errors import IndexBusyError, IndexNotBuiltError, SemanticUnavailableError
from core.base.logs import logger
from core.base.models import SearchMode
from core.base.paths import AppPaths
from core.engine_vaults import VaultRegistry
from core.index.indexer import Progress, SyncStats, VaultIndex
from core.index.manifest import IndexInfo, load_info
from core.index.sync_report import SyncReport
from core.index.vault_lock import BUSY_STATE, LIVE_WAIT_S
from core.ocr_stage import ocr_stage
from core.search.admission import Admission
from core.semantic import (
    SEMANTIC_OFF,
    EmbedderFactory,
    EmbedderPool,
    default_embedder_factory,
    embed_vectors,
    embeddable_files,
    vault_side,
)

if TYPE_CHECKING:
    # Imported where used: the semantic side never by a keyword search, the search stack never by `cairn index`.
    from core.base.models import SearchResponse
    from core.index.vector_store import EmbedStats, VaultVectors
    from core.providers.embedding import Embedder
    from core.search.related import NoteLinks
    from core.search.search import SearchRequest
    from core.search.sides import VaultSearchSide
    from core.status import VaultStatus

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
        self._lock = threading.RLock()
        self.registry = VaultRegistry(paths, config, self._lock, on_forget=self._forget_vectors)
        self._vectors: dict[str, VaultVectors] = {}
        self._embedders = EmbedderPool(embedder_factory, self._lock, paths.cache_dir / "models")
        self._admission = Admission(max_concurrent_searches)
        self.child_sync_problem: str | None = None  # why the last bulk index ran in-process
        self.embedding_now: dict[str, tuple[int, int]] = {}  # vault → (done, total) while it is embedded

    def _forget_vectors(self, name: str) -> None:
        self._vectors.pop(name, None)

    # -- vaults (see core.engine_vaults) ---------------------------------------------------------

    @property
    def config(self) -> EngineConfig:
        return self.registry.config

    @property
    def config_problem(self) -> str | None:
        """A damaged config.json that was set aside at start, in words."""
        return self.registry.config_problem

    @property
    def vaults(self) -> tuple[VaultConfig, ...]:
        return self.registry.config.vaults

    def add_vault(self, root: Path, name: str | None = None) -> VaultConfig:
        return self.registry.add_vault(root, name)

    def remove_vault(self, name: str) -> None:
        self.registry.remove_vault(name)

    def update_config(self, config: EngineConfig) -> None:
        self.registry.update_config(config)

    def reload_config(self) -> bool:
        return self.registry.reload_config()

    def vault(self, name: str) -> VaultConfig:
        return self.registry.vault(name)

    def index_for(self, name: str) -> VaultIndex:
        return self.registry.index_for(name)

    def keyword_built(self, name: str) -> bool:
        return self.registry.keyword_built(name)

    def write_lock(self, name: str) -> threading.RLock:
        return self.registry.write_lock(name)

    # -- semantic side ---------------------------------------------------------------------

    def embedder_for(self, vc: VaultConfig) -> Embedder | None:
        """The vault's embedder, or None with the reason kept in `semantic_problem`."""
        return self._embedders.get(vc)

    def vectors_for(self, name: str) -> VaultVectors | None:
        from core.index.embed_cache import EmbeddingCache
        from core.index.vector_store import ModelIdentity, VaultVectors, VectorStatus

        with self._lock:
            vv = self._vectors.get(name)
            if vv is not None:
                return vv
            vc = self.vault(name)
            emb = self.embedder_for(vc)
            if emb is None:
                return None
            from core.providers.embedding.base import EmbedderUnavailable

            try:
                model = ModelIdentity(emb.model_id, emb.model_hash, emb.dims)  # a remote model's dims: a request
            except EmbedderUnavailable as exc:  # down, hanging or talking nonsense: keyword search, reason shown
                self._embedders.unavailable(exc, vc)
                return None
            cache = EmbeddingCache(self.paths.cache_dir / "embeddings", model.model_hash, model.dims)
            vi = self.index_for(name)
            vv = VaultVectors(vi.dir, name, model, cache)
            # A vector file that names its chunks, saved when the vault had as many chunks as now,
            # is searched without the manifest (~0.2 s of a cold hybrid `cairn search` at 10k notes);
            # the manifest is still read by whatever changes the vault, or filters by folder or tag.
            if not (vv.rows_from_file and vv.saved_chunks == vi.info.chunks):
                vv.bind(embeddable_files(vc, vi.files))
            if (vi.recovery if vi.manifest_read else vi.recovery_found) is not None and vv.status == VectorStatus.OK:
                vv.dirty = True  # the vector file may predate the crash: save after reconciling
            self._vectors[name] = vv
            return vv

    def semantic_problem(self, name: str) -> str | None:
        return self._embedders.problem(name)

    # -- indexing --------------------------------------------------------------------------

    def sync(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        embed: bool = True,
        bulk_in_child: bool = False,
        keyword_ready: Callable[[str], None] | None = None,
        keyword: bool = True,  # False (Resume after Cancel): the keyword index untouched, only missing vectors made
    ) -> list[SyncReport]:
        """Keyword index first (search works at once), then embeddings in batches.

        `keyword_ready(name)` is called once a vault's keyword index is searchable and
        its write lock free (live edits queued meanwhile are applied from then on).

        With `bulk_in_child`, a vault with no index yet is built in a child process
        (core.index.child_sync) so a UI thread in this process never waits on Whoosh.
        """
        reports = []
        for name in names or [v.name for v in self.config.vaults]:
            with self.write_lock(name):
                vi = self.index_for(name)
                kw = self._bulk_in_child(name, progress, cancel) if keyword and bulk_in_child and not vi.files else None
                if kw is None:
                    vi = self.index_for(name)
                    kw = vi.sync(progress=progress, cancel=cancel) if keyword else SyncStats.untouched(vi.info)
            if keyword_ready is not None:
                keyword_ready(name)
            # Embedding (minutes on a large vault) takes the write lock one batch at a time, so
            # live edits are indexed between batches instead of after the whole vault.
            emb_stats = self.embed_vault(name, progress=progress, cancel=cancel, yielding=True) if embed and not kw.cancelled else None
            ocr, emb_stats = ocr_stage(self, name, kw, emb_stats, embed=embed, progress=progress, cancel=cancel)  # last: OCR
            reports.append(SyncReport(kw, emb_stats, self.semantic_problem(name), ocr))
        return reports

    def catch_up(self, name: str) -> SyncReport:
        """Reconcile one vault with its folder (size and mtime against the manifest), live-style.

        What a watcher runs when it starts: edits made while nothing watched (the
        app closed, a first index running) are re-indexed, and only the notes that
        changed are embedded, so a vault whose embedding never finished is not
        embedded whole on the watcher's thread.
        """
        with self.write_lock(name):
            kw = self.index_for(name).sync(lock_wait=LIVE_WAIT_S)  # the watcher's thread defers, never waits long
            emb = None
            if kw.changed_paths or kw.removed_paths:
                emb = self.embed_vault(name, persist=False, only=kw.changed_paths)
            return SyncReport(kw, emb, self.semantic_problem(name))

    def _bulk_in_child(self, name: str, progress: Progress | None, cancel: threading.Event | None) -> SyncStats | None:
        from core.base.gc_pause import gc_paused
        from core.index.child_sync import ChildSyncError, sync_keyword_in_child

        try:
            stats = sync_keyword_in_child(self.paths.data_dir, self.config, name, progress=progress, cancel=cancel)
        except ChildSyncError as exc:
            self.child_sync_problem = str(exc)
            logger(__name__).warning("indexing %s in-process: %s", name, exc)
            return None  # index in this process instead; slower for the UI, never wrong
        self.child_sync_problem = None
        old = self.registry.forget_index(name)  # the child wrote manifest and index: open them afresh
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
            ocr, emb = ocr_stage(self, name, kw, emb, only=rel_paths)  # an image or a scan saved into the vault
            return SyncReport(kw, emb, self.semantic_problem(name), ocr)

    def flush(self, names: Sequence[str] | None = None) -> None:
        """Persist everything the live path holds in memory; clears the dirty flags."""
        for name in names or self.registry.open_names():
            with self.write_lock(name):
                vi = self.registry.open_index(name)
                if vi is None:
                    continue
                try:
                    with vi.xlock.held(LIVE_WAIT_S):
                        vv = self._vectors.get(name)
                        if vv is not None and vv.dirty:
                            vv.save()
                            vi.wrote()
                        if vi.is_dirty:
                            vi.flush()
                except IndexBusyError:
                    # Another process writes this index now; the dirty flag keeps our edits
                    # recoverable and the next flush tries again.
                    logger(__name__).info("flush of %s deferred: %s", name, BUSY_STATE)

    def is_dirty(self, name: str) -> bool:
        vi = self.registry.open_index(name)
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
        yielding: bool = False,
    ) -> EmbedStats | None:
        """Bring the vault's vectors in step with its manifest; `only`: embed just these notes.

        With `yielding`, the vault's write lock is held only while a batch is prepared
        and stored, not while it is embedded: a live edit may change the manifest in
        between, and the batch drops what it changed (see `VaultVectors.sync`).
        """
        vv = self.vectors_for(name)
        if vv is None:
            return None
        vc = self.vault(name)
        emb = self.embedder_for(vc)
        assert emb is not None
        stats, problem = embed_vectors(
            vc, self.index_for(name), vv, emb, lambda: self.write_lock(name),
            progress=progress, cancel=cancel, persist=persist, only=only, yielding=yielding, busy=self.embedding_now,
        )  # fmt: skip
        if problem is not None:
            self._embedders.failed(name, problem)
        return stats

    # -- search ----------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResponse:
        """Search every vault. The one place that applies the user's ranking settings: a request's
        unset profile, per-note cap, top-N, RRF k and title boost come from the config."""
        from core.search.search import search
        request = request.with_defaults(self.config.search_settings())
        with self._admission:
            # A keyword search never touches vectors: opening them (model check, key hashing, usearch)
            # was ~40 % of a cold keyword `cairn search` on 10k notes.
            semantic = request.mode != SearchMode.KEYWORD
            sides = self._sides(semantic=semantic)
            if not semantic:
                return search(request, sides)
            from core.providers.embedding.base import EmbedderUnavailable

            try:
                return search(request, sides)
            except EmbedderUnavailable as exc:  # its server went away since it last answered
                self._embedders.unavailable(exc)
                return search(request, self._sides(semantic=semantic))  # its vaults now by keywords, reason shown

    def _sides(self, *, semantic: bool) -> list[VaultSearchSide]:
        """What a search reads of each vault; raises `IndexNotBuiltError` when there is nothing to search."""
        sides = [self._side(v.name, semantic=semantic) for v in self.config.vaults]
        if not any(s is not None for s in sides):
            if not any(self.registry.is_built(v.name) for v in self.config.vaults):
                raise self.registry.nothing_built()
        return [s for s in sides if s is not None]

    def warm_up(self) -> None:
        """Pay the first search's one-time costs now, off the user's path.

        The first query after opening pays for what loads on first use: the Whoosh
        searcher and its field lengths, the manifest and link graph, the vector keys and
        the model's session (docs/benchmarks.md has the figures). The app calls this on its
        query thread once the window is up; a failure here is the next search's to report.
        """
        from core.search.search import SearchRequest
        if not any(self.index_for(v.name).is_built for v in self.config.vaults):
            return
        try:
            self.search(SearchRequest("notes", k=1))
        except Exception:  # noqa: BLE001 - a warm-up never raises; the real search reports problems
            logger(__name__).debug("warm-up search failed", exc_info=True)

    def _side(self, name: str, *, semantic: bool = True) -> VaultSearchSide | None:
        try:
            vi = self.index_for(name)
        except IndexBusyError:
            return None  # being built by another process: the other vaults are searched
        if not vi.is_built or not semantic:
            return vault_side(self.vault(name), vi, None, None, None, semantic=semantic)
        vv, vc = self.vectors_for(name), self.vault(name)
        emb = self.embedder_for(vc) if vv is not None else None
        return vault_side(vc, vi, vv, emb, self.semantic_problem(name), semantic=semantic, embedding=self.embedding_now.get(name))

    def similar(self, name: str, rel_path: str, k: int = 10, *, allow_restricted: bool = False) -> list[tuple[str, str, float]]:
        """Other notes nearest to this one by meaning (see core.search.similar)."""
        from core.search.similar import similar_notes

        vi, vv = self.index_for(name), self.vectors_for(name)
        problem = self.semantic_problem(name)
        if vv is None and vi.is_built and problem and problem != SEMANTIC_OFF:
            raise SemanticUnavailableError(f"Similar notes need the embedding model of vault {name!r}: {problem}")
        return similar_notes(vi, vv, name, rel_path, k, allow_restricted=allow_restricted)

    def links(self, name: str, rel_path: str, k: int = 10, *, allow_restricted: bool = True) -> NoteLinks:
        """A note's links, backlinks, unlinked mentions and related notes (see core.search.related)."""
        from core.search.related import note_links

        vi = self.index_for(name)
        if not vi.is_built:
            raise IndexNotBuiltError(f"No index for vault {name!r} yet — run `cairn index`")
        vv = self.vectors_for(name)
        return note_links(vi, vv, name, rel_path, k, allow_restricted=allow_restricted)

    # -- status ----------------------------------------------------------------------------

    def status(self) -> list[VaultStatus]:
        return [self.vault_status(v.name) for v in self.config.vaults]

    def vault_status(self, name: str) -> VaultStatus:
        """The stored state of one vault; the semantic side as an enum plus a reason in words."""
        from core.status import busy_status, semantic_coverage, stored_status  # not a search's: imported here
        v = self.vault(name)
        try:
            vi = self.index_for(name)
            if not vi.is_built and not vi.xlock.free():  # opened here between two steps of a build elsewhere
                raise IndexBusyError(BUSY_STATE)
        except IndexBusyError:
            return busy_status(load_info(self.paths.vault_dir(name) / "info.json") or IndexInfo(name, v.root))
        vv = self.vectors_for(name)
        if vv is not None and self.embedder_for(v) is None:
            vv = None  # vectors on disk, but no model to embed a query: semantic search is unavailable
        files = embeddable_files(v, vi.files) if vv is not None else {}
        return stored_status(v, vi, semantic_coverage(vv, self.semantic_problem(name), files))

    def close(self) -> None:
        self.registry.close()
