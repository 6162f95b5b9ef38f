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

from core.base.config import (
    EngineConfig,
    VaultConfig,
    add_vault,
    merge_settings,
    modify_config,
    placement_problem,
    read_config,
    remove_vault,
)
from core.base.errors import BusyError, IndexBusyError, IndexNotBuiltError, UsageError
from core.base.models import SearchFilters, SearchMode, SearchResponse, chunk_id
from core.base.paths import AppPaths
from core.base.vault_state import Phase, SemanticState, VaultProgress
from core.index.embed_cache import EmbeddingCache
from core.index.embed_text import embedding_input
from core.index.indexer import Progress, Recovery, SyncStats, VaultIndex
from core.index.manifest import FileRecord, IndexInfo, load_info
from core.index.vault_lock import BUSY_STATE, LIVE_WAIT_S, SYNC_WAIT_S
from core.index.vector_store import EmbedStats, ModelIdentity, VaultVectors, VectorStatus
from core.providers.embedding import (
    Embedder,
    EmbedderUnavailable,
    EmbeddingCancelled,
    create_embedder,
    default_registry,
)
from core.search.related import NoteLinks, note_links
from core.search.search import SearchRequest, VaultSearchSide, search
from core.vault.attachments import AttachmentCount, count_attachments

EmbedderFactory = Callable[[VaultConfig], Embedder]

SEMANTIC_OFF = "semantic search is turned off"


@dataclass(frozen=True, slots=True)
class VaultStatus:
    """A vault's index as stored: the keyword side's health and how much of it has vectors."""

    info: IndexInfo
    built: bool
    semantic: SemanticState
    semantic_fraction: float
    semantic_reason: str = ""  # why semantic is not OK, for the user; never parsed
    embedded: int = 0  # chunks with a vector
    wanted: int = 0  # chunks that should have one
    attachments: tuple[AttachmentCount, ...] = ()  # PDFs and text files, counted apart from notes
    languages: tuple[tuple[str, float], ...] = ()  # detected chunk languages and their shares
    advice: str | None = None  # e.g. a better embedding model for this vault's languages
    elsewhere: bool = False  # another Cairn process is building this index: shown, retried later

    def progress(self, phase: Phase | None = None, done: int = 0, total: int = 0) -> VaultProgress:
        """This status as the one `VaultProgress` the views show; `phase` while indexing runs."""
        if phase is None:
            phase = Phase.ELSEWHERE if self.elsewhere else Phase.READY if self.built else Phase.NOT_BUILT
        if phase is not Phase.KEYWORD and total == 0:
            done, total = self.embedded, self.wanted
        return VaultProgress(self.info.vault, phase, done, total, self.semantic, self.semantic_reason)


# A vault whose chunks are mostly not English gets told about the multilingual model.
NON_ENGLISH_ADVICE_SHARE = 0.5
LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "sv": "Swedish", "ru": "Russian", "uk": "Ukrainian", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
}  # fmt: skip


def language_advice(shares: dict[str, float], embedder: str) -> str | None:
    """Suggest the multilingual model when the English-only default would miss most of the meaning."""
    if embedder != "builtin" or not shares:
        return None
    other = 1.0 - shares.get("en", 0.0)
    if other < NON_ENGLISH_ADVICE_SHARE:
        return None
    top, share = next((lang, s) for lang, s in shares.items() if lang != "en")
    name = LANGUAGE_NAMES.get(top, top)
    main = f"{share:.0%} {name}" if share >= NON_ENGLISH_ADVICE_SHARE else f"{other:.0%} not English"
    return (
        f"This vault is {main}: the built-in English model will miss meaning. "
        "Switch its embedding model to “Built-in multilingual” in Settings."
    )


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
    info = default_registry().get(vault.embedder)
    key = info.api_key() if info is not None else None
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
        self.config_problem: str | None = None  # a damaged config.json set aside at start
        if config is None:
            loaded = read_config(paths)
            config, self.config_problem = loaded.config, loaded.problem
        self.config = config
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
        added: list[VaultConfig] = []

        def change(disk: EngineConfig) -> EngineConfig:
            # Judged against the file, not this engine's copy: another process may have added vaults.
            problem = placement_problem(disk, Path(root), self.paths.data_dir)
            if problem is not None:
                raise UsageError(problem)
            new, vc = add_vault(disk, Path(root), name)
            added.append(vc)
            return new

        with self._lock:
            self.config = modify_config(self.paths, change)
            return added[0]

    def remove_vault(self, name: str) -> None:
        """Forget a vault; waits for its writer (a sync or a live update) so none is cut off mid-write.

        The lock lives here, not in a caller, so the CLI and the MCP server get
        the same protection as the app.
        """
        with self.write_lock(name), self._lock:
            vi = self._indexes.pop(name, None)
            if vi is not None:
                vi.close()
            self._vectors.pop(name, None)
            self.config = modify_config(self.paths, lambda disk: remove_vault(disk, name))

    def update_config(self, config: EngineConfig) -> None:
        """Save `config`'s settings; vaults other processes registered meanwhile are kept."""
        with self._lock:
            before = self.config
            self.config = modify_config(self.paths, lambda disk: merge_settings(disk, before, config))

    def reload_config(self) -> bool:
        """Pick up changes other processes made to config.json; True when the vault list changed.

        Only the vault list is taken over live: settings changes need a fresh engine
        (indexes are built from them), which the caller decides about.
        """
        loaded = read_config(self.paths)
        if loaded.problem is not None:
            self.config_problem = loaded.problem
        with self._lock:
            if loaded.config.vaults == self.config.vaults:
                return False
            gone = {v.name for v in self.config.vaults} - {v.name for v in loaded.config.vaults}
            for name in gone:
                vi = self._indexes.pop(name, None)
                if vi is not None:
                    vi.close()
                self._vectors.pop(name, None)
            self.config = replace(self.config, vaults=loaded.config.vaults)
            return True

    def vault(self, name: str) -> VaultConfig:
        vc = self.config.vault_named(name)
        if vc is None:
            known = ", ".join(v.name for v in self.config.vaults) or "none"
            raise UsageError(f"No vault named {name!r} (known: {known}). Add it with `cairn index --vault PATH`.")
        return vc

    def index_for(self, name: str) -> VaultIndex:
        """The vault's open index, reopened when another process rewrote it since.

        Raises:
            IndexBusyError: Another Cairn process is building it; nothing here was created or reset.
        """
        with self._lock:
            vi = self._indexes.get(name)
            if vi is not None and vi.changed_elsewhere:
                vi = self._reopened(name, vi)
            if vi is None:
                vi = VaultIndex(self.vault(name), self.paths, self.config)
                self._indexes[name] = vi
            return vi

    def _reopened(self, name: str, vi: VaultIndex) -> VaultIndex | None:
        """Drop an index another process (`cairn index`, the app) rewrote, so this one sees its notes.

        Only when no thread here writes it (that writer saves its own view); the old
        object is not closed, as a search on another thread may still read it.
        """
        lock = self.write_lock(name)
        if not lock.acquire(blocking=False):
            return vi
        try:
            if vi.is_dirty or not vi.xlock.free():
                return vi  # unsaved live edits here, or the other writer is not done yet
            self._indexes.pop(name, None)
            self._vectors.pop(name, None)
            return None
        finally:
            lock.release()

    def _is_built(self, name: str) -> bool:
        try:
            return self.index_for(name).is_built
        except IndexBusyError:
            return False

    def keyword_built(self, name: str) -> bool:
        """Whether the vault's keyword index exists, without opening (or creating) it.

        The watcher asks this of a vault that may be in its first build, perhaps by
        another process: opening an index that is not there yet would start an empty one.
        """
        with self._lock:
            vi = self._indexes.get(name)
        if vi is not None:
            return vi.is_built
        return (self.paths.vault_dir(name) / "info.json").exists()

    def write_lock(self, name: str) -> threading.RLock:
        """One writer per vault: a full sync, a live update and a flush never interleave."""
        with self._lock:
            return self._write_locks.setdefault(name, threading.RLock())

    # -- semantic side ---------------------------------------------------------------------

    def embedder_for(self, vc: VaultConfig) -> Embedder | None:
        """The vault's embedder, or None with the reason kept in `semantic_problem`."""
        if self._embedder_factory is None:
            self._semantic_problem[vc.name] = SEMANTIC_OFF
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
            if vi.recovery is not None and vv.status == VectorStatus.OK:
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
        keyword_ready: Callable[[str], None] | None = None,
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
                kw = self._bulk_in_child(name, progress, cancel) if bulk_in_child and not vi.files else None
                if kw is None:
                    vi = self.index_for(name)
                    kw = vi.sync(progress=progress, cancel=cancel)
            if keyword_ready is not None:
                keyword_ready(name)
            # Embedding (minutes on a large vault) takes the write lock one batch at a time, so
            # live edits are indexed between batches instead of after the whole vault.
            emb_stats = None
            if embed and not kw.cancelled:
                emb_stats = self.embed_vault(name, progress=progress, cancel=cancel, yielding=True)
            reports.append(SyncReport(kw, emb_stats, self.semantic_problem(name)))
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
                    logging.getLogger(__name__).info("flush of %s deferred: %s", name, BUSY_STATE)

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
        vi = self.index_for(name)

        def current() -> dict[str, FileRecord]:
            return self._embeddable_files(vc, vi.files)

        files = current()

        def texts_for(refs: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
            ids = {chunk_id(name, rel, o): (rel, o) for rel, o in refs}
            stored = vi.keyword.stored(ids)
            files = current()  # under the write lock: the manifest as the keyword index holds it now
            out = {}
            for cid, chunk in stored.items():
                rel, o = ids[cid]
                rec = files.get(rel)
                if rec is not None:
                    out[(rel, o)] = embedding_input(rec.title, chunk.heading_path, chunk.body)
            return out

        try:
            stats = vv.sync(
                files,
                texts_for,
                lambda texts: emb.embed_documents(texts),
                progress,
                cancel,
                only=only,
                guard=(lambda: self.write_lock(name)) if yielding else None,
                current=current if yielding else None,
            )
        except EmbeddingCancelled:
            stats = EmbedStats(vv.desired, 0, 0, 0, 0.0, cancelled=True)
        except EmbedderUnavailable as exc:
            self._semantic_problem[name] = f"{exc.reason}: {exc}"
            stats = None
        finally:
            trim = getattr(emb, "trim", None)  # the built-in model's extra session: memory, not needed to search
            if trim is not None:
                trim()
        if persist and vv.dirty:
            with self.write_lock(name):
                try:
                    with vi.xlock.held(SYNC_WAIT_S):
                        vv.save()  # an unchanged vault rewrites nothing
                        vi.wrote()
                except IndexBusyError:  # another process writes now: kept dirty, saved by the next flush
                    logging.getLogger(__name__).info("vectors of %s not saved yet: %s", name, BUSY_STATE)
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
        """Search every vault. The one place that applies the user's ranking settings: a request's
        unset profile, per-note cap, top-N, RRF k and title boost come from the config."""
        request = request.with_defaults(self.config.search_settings())
        with self._admission:
            # A keyword search never touches vectors: opening them (model check, key hashing, usearch)
            # was ~40 % of a cold keyword `cairn search` on 10k notes.
            semantic = request.mode != SearchMode.KEYWORD
            sides = [self._side(v.name, semantic=semantic) for v in self.config.vaults]
            if not any(s is not None for s in sides):
                built = [v.name for v in self.config.vaults if self._is_built(v.name)]
                if not built:
                    elsewhere = [v.name for v in self.config.vaults if self._busy(v.name)]
                    if elsewhere:
                        raise IndexNotBuiltError(f"{', '.join(elsewhere)}: {BUSY_STATE} — search again when it has finished")
                    stale = [v.name for v in self.config.vaults if self.index_for(v.name).recovery == Recovery.OUTDATED]
                    if stale:
                        raise IndexNotBuiltError(
                            f"The index of {', '.join(stale)} was built by an older version of Cairn — run `cairn index` to rebuild it"
                        )
                    raise IndexNotBuiltError("No index yet — run `cairn index --vault PATH` (or press Index in the app)")
            return search(request, [s for s in sides if s is not None])

    def warm_up(self) -> None:
        """Pay the first search's one-time costs now, off the user's path.

        The first query after opening took 166-300 ms more than the next ones: the
        Whoosh searcher and its field lengths, the manifest and link graph, the vector
        keys and the model's session all load on first use. The app calls this on its
        query thread once the window is up; a failure here is the next search's to report.
        """
        if not any(self.index_for(v.name).is_built for v in self.config.vaults):
            return
        try:
            self.search(SearchRequest("notes", k=1))
        except Exception:  # noqa: BLE001 - a warm-up never raises; the real search reports problems
            logging.getLogger(__name__).debug("warm-up search failed", exc_info=True)

    def _busy(self, name: str) -> bool:
        """Not built here, and another process holds its lock: a first index being built elsewhere."""
        try:
            vi = self.index_for(name)
        except IndexBusyError:
            return True
        return not vi.is_built and not vi.xlock.free()

    def _side(self, name: str, *, semantic: bool = True) -> VaultSearchSide | None:
        try:
            vi = self.index_for(name)
        except IndexBusyError:
            return None  # being built by another process: the other vaults are searched
        if not vi.is_built:
            return None
        if not semantic:
            return VaultSearchSide(name, vi.keyword, unavailable_reason="keyword search", links=vi.links)
        vv = self.vectors_for(name)
        emb = self.embedder_for(self.vault(name)) if vv is not None else None
        if vv is None or len(vv.index) == 0:
            reason = self.semantic_problem(name) or ("vector index " + (vv.status if vv else "missing"))
            return VaultSearchSide(name, vi.keyword, unavailable_reason=reason, links=vi.links)
        note = None
        if vv.fraction_complete < 1.0:  # the same number the status bar shows for this vault
            note = f"{name}: semantic index {int(vv.fraction_complete * 100)}% complete"
        files = vi.files
        searcher = _BoundVectors(vv, files)
        return VaultSearchSide(name, vi.keyword, searcher, emb, semantic_note=note, links=vi.links)

    def similar(self, name: str, rel_path: str, k: int = 10, *, allow_restricted: bool = False) -> list[tuple[str, str, float]]:
        """Other notes nearest to this one by meaning (see core.search.similar)."""
        from core.search.similar import similar_notes

        return similar_notes(self.index_for(name), self.vectors_for(name), name, rel_path, k, allow_restricted=allow_restricted)

    def links(self, name: str, rel_path: str, k: int = 10, *, allow_restricted: bool = True) -> NoteLinks:
        """A note's links, backlinks, unlinked mentions and related notes (see core.search.related)."""
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
        v = self.vault(name)
        try:
            vi = self.index_for(name)
            if not vi.is_built and not vi.xlock.free():  # opened here between two steps of a build elsewhere
                raise IndexBusyError(BUSY_STATE)
        except IndexBusyError:
            info = replace(load_info(self.paths.vault_dir(name) / "info.json") or IndexInfo(name, v.root), state=BUSY_STATE)
            return VaultStatus(info, False, SemanticState.MISSING, 0.0, BUSY_STATE, elsewhere=True)
        vv = self.vectors_for(name)
        embedded = wanted = 0
        reason = ""
        if vv is None:
            problem = self.semantic_problem(name) or "the embedding model could not be loaded"
            semantic = SemanticState.OFF if problem == SEMANTIC_OFF else SemanticState.UNAVAILABLE
            reason = problem
            fraction = 0.0
        else:
            vv.desired = vv.desired or sum(len(r.chunks) for r in self._embeddable_files(v, vi.files).values())
            fraction = vv.fraction_complete
            embedded, wanted = min(len(vv.key_hash), vv.desired), vv.desired
            if 0 < len(vv.index) and fraction < 1.0:
                semantic = SemanticState.PARTIAL  # vectors held in memory count, saved or not yet
                reason = f"{int(fraction * 100)}% of the vault embedded; semantic results cover only that part"
            else:
                semantic = SemanticState(vv.status) if vv.status in SemanticState._value2member_map_ else SemanticState.MISSING
                if semantic is SemanticState.MISSING:
                    reason = "not embedded yet"
                elif semantic is SemanticState.MODEL_MISMATCH:
                    reason = "embedded by another model; re-index to rebuild"
        info = vi.info if vi.is_built else replace(vi.info, state="not built")
        attachments = count_attachments(vi.files, vi.info.skipped)
        shares = vi.keyword.language_shares() if vi.is_built else {}
        return VaultStatus(
            info, vi.is_built, semantic, fraction, reason, embedded, wanted, attachments,
            languages=tuple(shares.items()), advice=language_advice(shares, v.embedder),
        )  # fmt: skip

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
