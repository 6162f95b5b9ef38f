"""The engine's semantic side: which embedder a vault gets, what it may see, and embedding a vault.

Apart from the engine so the embedding pass (batches, yielding the write lock, saving
the vectors) reads as one function over the parts it needs, not as engine state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from core.base.confidentiality import may_send, sends_text_away
from core.base.config import VaultConfig
from core.base.errors import IndexBusyError
from core.base.logs import logger
from core.base.models import chunk_id
from core.index.embed_text import chunk_body, embedding_input
from core.index.indexer import Progress, VaultIndex
from core.index.keyword_schema import StoredChunk
from core.index.manifest import FileRecord
from core.index.note_vectors import note_headings, note_input
from core.index.vault_lock import BUSY_STATE, SYNC_WAIT_S

if TYPE_CHECKING:
    import numpy as np

    from core.base.models import SearchFilters
    from core.index.vector_store import EmbedStats, VaultVectors
    from core.providers.embedding import Embedder, EmbedderUnavailable
    from core.search.sides import VaultSearchSide

# The vector store, numpy and the embedding providers are imported where they are used: a
# keyword search (a keyword `cairn search` process above all) never loads any of them.
EmbedderFactory = Callable[[VaultConfig], "Embedder"]
EmbedderKey = tuple[str, str | None, str | None]  # (kind, model, endpoint)

#: How long an embedder that failed (a server down, hanging or answering garbage) is left alone:
#: every command and search meanwhile runs on keywords at once instead of waiting on it again.
DOWN_FOR_S = 60.0
SEMANTIC_OFF = "semantic search is turned off"  # a vault's semantic problem when it is off (core.status)


def default_embedder_factory(vault: VaultConfig) -> Embedder:
    from core.providers.embedding import create_embedder, default_registry

    info = default_registry().get(vault.embedder)
    key = info.api_key() if info is not None else None
    return create_embedder(vault.embedder, model=vault.embed_model, base_url=vault.embed_base_url, api_key=key)


def embeddable_files(vc: VaultConfig, files: dict[str, FileRecord]) -> dict[str, FileRecord]:
    """Restricted notes never leave the machine: a remote embedder does not see them."""
    from core.providers.embedding import default_registry

    info = default_registry().get(vc.embedder)  # an unknown embedder counts as remote
    if not sends_text_away(info):
        return files
    return {rel: rec for rel, rec in files.items() if may_send(rec.confidentiality, info)}


class EmbedderPool:
    """One embedder per (kind, model, endpoint), shared by the vaults that use it, and why one is missing.

    Takes the engine's lock rather than its own, so a model is loaded while nothing
    else in the engine changes, exactly as when this lived inside `Engine`. An embedder
    that fails (`unavailable`) is dropped and not asked again for `DOWN_FOR_S`.
    """

    def __init__(self, factory: EmbedderFactory | None, lock: threading.RLock, models_dir: Path | None = None) -> None:
        self._factory = factory
        self._lock = lock
        self._models_dir = models_dir  # where an embedder may keep a prepared copy of its model
        self._embedders: dict[EmbedderKey, Embedder] = {}
        self._problems: dict[str, str] = {}
        self._down: dict[EmbedderKey, tuple[float, str]] = {}  # failed embedders: since when, why
        self._users: dict[EmbedderKey, set[str]] = {}  # the vaults each embedder serves

    def get(self, vc: VaultConfig) -> Embedder | None:
        """The vault's embedder, or None with the reason kept for `problem`."""
        if self._factory is None:
            self._problems[vc.name] = SEMANTIC_OFF
            return None
        from core.providers.embedding import EmbedderUnavailable

        key = _key(vc)
        with self._lock:
            self._users.setdefault(key, set()).add(vc.name)
            down = self._down.get(key)
            if down is not None and time.monotonic() - down[0] < DOWN_FOR_S:
                self._problems[vc.name] = down[1]
                return None
            emb = self._embedders.get(key)
            if emb is None:
                try:
                    emb = self._made(vc)
                except EmbedderUnavailable as exc:
                    self._problems[vc.name] = f"{exc.reason}: {exc}"
                    return None
                self._embedders[key] = emb
            self._down.pop(key, None)
            self._problems.pop(vc.name, None)
            return emb

    def _made(self, vc: VaultConfig) -> Embedder:
        assert self._factory is not None
        emb = self._factory(vc)
        _ = emb.model_hash  # verifies the model file now, not mid-search
        prepare = getattr(emb, "prepare_in", None)  # the built-in model (see MiniLMEmbedder.prepare_in)
        if self._models_dir is not None and callable(prepare):
            prepare(self._models_dir)
        return emb

    def unavailable(self, exc: EmbedderUnavailable, vc: VaultConfig | None = None) -> None:
        """An embedder failed (`vc`'s, or whichever raised `exc`): drop it, say why, leave it alone a while.

        A server that is down, hangs or answers garbage then costs one timeout, not one per
        command or per search; its vaults are searched by keywords with this reason shown.
        """
        problem = f"{exc.reason}: {exc}"
        with self._lock:
            if vc is not None:
                keys = [_key(vc)]
            else:
                keys = [k for k, e in self._embedders.items() if getattr(e, "model_hash", None) == exc.model_hash]
            for key in keys:
                self._embedders.pop(key, None)
                self._down[key] = (time.monotonic(), problem)
                for name in self._users.get(key, ()):
                    self._problems[name] = problem

    def loaded(self) -> tuple[Embedder, ...]:
        """The embedders made so far: a model loads on first use, never at start."""
        return tuple(self._embedders.values())

    def problem(self, name: str) -> str | None:
        return self._problems.get(name)

    def failed(self, name: str, problem: str) -> None:
        """An embedder that loaded failed later (a remote one went away): say so in the status."""
        self._problems[name] = problem


def _key(vc: VaultConfig) -> EmbedderKey:
    return (vc.embedder, vc.embed_model, vc.embed_base_url)


class BoundVectors:
    """A vault's vectors bound to its manifest records, as `search` expects.

    The manifest is read only for a filter that needs it (folders, tags, types, dates):
    restricted notes are left out by the keyword index's word for it (see `VaultVectors.search`).
    """

    def __init__(self, vectors: VaultVectors, vi: VaultIndex) -> None:
        self._vectors = vectors
        self._vi = vi

    def search(self, query: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]:
        vi = self._vi
        return self._vectors.search(query, filters, limit, lambda: vi.files, vi.keyword.restricted_chunk_ids)

    def chunk_vectors(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        from core.index.vector_index import key_for

        ids = {key_for(cid): cid for cid in chunk_ids}
        return {ids[k]: v for k, v in self._vectors.index.vectors(ids).items()}


class VaultTexts:
    """What the model is shown for a vault's chunks and notes, read from the keyword index's stored text.

    Called under the vault's write lock while embedding yields it: the manifest read then is
    the one the keyword index holds.
    """

    def __init__(self, vc: VaultConfig, vi: VaultIndex) -> None:
        self._vc = vc
        self._vi = vi

    def current(self) -> dict[str, FileRecord]:
        """The notes this vault's embedder may see, as the manifest holds them now."""
        return embeddable_files(self._vc, self._vi.files)

    def _stored(self, refs: list[tuple[str, int]]) -> dict[tuple[str, int], StoredChunk]:
        ids = {chunk_id(self._vc.name, rel, o): (rel, o) for rel, o in refs}
        return {ids[cid]: chunk for cid, chunk in self._vi.keyword.stored(ids).items()}

    def for_chunks(self, refs: list[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """Each chunk's embedding input: where it sits (title, headings), then its text."""
        files = self.current()
        return {
            ref: embedding_input(files[ref[0]].title, chunk.heading_path, chunk.body)
            for ref, chunk in self._stored(refs).items()
            if ref[0] in files
        }

    def for_notes(self, refs: list[tuple[str, int]]) -> dict[str, str]:
        """Each note's short text for its first vector, from its opening passage (see `core.index.note_vectors`)."""
        files = self.current()
        return {
            rel: note_input(files[rel].title, self._vi.links.aliases(rel), note_headings(files[rel].chunks), chunk_body(chunk.heading_path, chunk.body))
            for (rel, _), chunk in self._stored(refs).items()
            if rel in files
        }


def embed_vectors(
    vc: VaultConfig,
    vi: VaultIndex,
    vv: VaultVectors,
    emb: Embedder,
    write_lock: Callable[[], AbstractContextManager[object]],
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    persist: bool = True,
    only: Sequence[str] | None = None,
    yielding: bool = False,
    busy: dict[str, tuple[int, int]] | None = None,
) -> tuple[EmbedStats | None, str | None]:
    """Bring `vv` in step with `vi`'s manifest; the stats and, if the embedder failed, why.

    With `yielding`, `write_lock()` is held only while a batch is prepared and stored,
    not while it is embedded: a live edit may change the manifest in between, and the
    batch drops what it changed (see `VaultVectors.sync`). `busy` (the engine's) holds
    the vault's (done, total) while this runs, so a search meanwhile says "being embedded".
    """
    if busy is not None:
        with noting_progress(busy, vc.name, progress) as noted:
            return embed_vectors(vc, vi, vv, emb, write_lock, progress=noted, cancel=cancel, persist=persist, only=only, yielding=yielding)
    from core.index.vector_store import EmbedStats
    from core.providers.embedding import EmbedderUnavailable, EmbeddingCancelled

    name = vc.name
    problem: str | None = None

    texts = VaultTexts(vc, vi)
    files = texts.current()

    stats: EmbedStats | None
    try:
        stats = vv.sync(
            files,
            texts.for_chunks,
            lambda inputs: emb.embed_documents(inputs),
            progress,
            cancel,
            only=only,
            guard=write_lock if yielding else None,
            current=texts.current if yielding else None,
            note_texts=texts.for_notes,
        )
    except EmbeddingCancelled:
        stats = EmbedStats(vv.desired, 0, 0, 0, 0.0, cancelled=True)
    except EmbedderUnavailable as exc:
        problem = f"{exc.reason}: {exc}"
        stats = None
    finally:
        trim = getattr(emb, "trim", None)  # the built-in model's extra session: memory, not needed to search
        if trim is not None:
            trim()
    _refresh_vocabulary(vc, vi, vv, emb, stats if only is None else None, problem, cancel)
    if persist and vv.dirty:
        with write_lock():
            try:
                with vi.xlock.held(SYNC_WAIT_S):
                    vv.save()  # an unchanged vault rewrites nothing
                    vi.wrote()
            except IndexBusyError:  # another process writes now: kept dirty, saved by the next flush
                logger(__name__).info("vectors of %s not saved yet: %s", name, BUSY_STATE)
    elif not persist:
        vv.cache.flush()  # cheap append: a crash before the next flush re-embeds nothing
    return stats, problem


def _refresh_vocabulary(
    vc: VaultConfig,
    vi: VaultIndex,
    vv: VaultVectors,
    emb: Embedder,
    stats: EmbedStats | None,
    problem: str | None,
    cancel: threading.Event | None,
) -> None:
    """The vault's words in the embedding space, for closing vocabulary gaps (core.index.vocab_vectors).

    Words of restricted notes are left out for a remote embedder, as their chunks are.
    Best effort: a failure leaves the search without expansion words, never the sync failed.
    """
    from core.index import name_vectors, vocab_vectors, vocabulary
    from core.providers.embedding import default_registry

    if stats is None or stats.cancelled or problem is not None:
        return  # only after a full pass that worked (`stats` None for a partial one): the words may have changed
    info = default_registry().get(vc.embedder)  # an unknown embedder counts as remote
    try:
        vocabulary.keep_terms(vi.keyword)  # spelling's term lists, so no search lists the term tables
        texts = (chunk.body for chunk in vi.keyword.all_stored() if may_send(chunk.confidentiality, info))
        vocab_vectors.refresh(vv.directory, texts, lambda words: emb.embed_documents(words), emb.model_id, cancel)
        files = embeddable_files(vc, vi.files)
        rows = name_vectors.names_of({rel: rec.title for rel, rec in files.items()}, vi.links.aliases)
        name_vectors.refresh(vv.directory, rows, lambda names: emb.embed_documents(names), emb.model_id, cancel)
    except Exception:  # noqa: BLE001 - an optional aid; the sync itself succeeded
        logger(__name__).warning("vocabulary and name vectors of %s not built", vi.keyword.directory, exc_info=True)


@contextmanager
def noting_progress(board: dict[str, tuple[int, int]], name: str, progress: Progress | None) -> Iterator[Progress]:
    """`progress`, also kept in `board[name]` while the block runs: a search meanwhile sees the
    vault "being embedded n%" instead of "semantic unavailable" (see `vault_side`)."""

    def noted(done: int, total: int, phase: str) -> None:
        board[name] = (done, total)
        if progress is not None:
            progress(done, total, phase)

    board[name] = (0, 0)
    try:
        yield noted
    finally:
        board.pop(name, None)


def vault_side(
    vc: VaultConfig,
    vi: VaultIndex,
    vv: VaultVectors | None,
    emb: Embedder | None,
    problem: str | None,
    *,
    semantic: bool,
    embedding: tuple[int, int] | None = None,
) -> VaultSearchSide | None:
    """What `search` reads of one vault: keyword always, vectors when there are any to search.

    `embedding` is (done, total) while an embedding pass runs: a vault with no vectors
    yet is then "being embedded", never "unavailable".
    """
    from core.search.sides import VaultSearchSide  # the search side: never imported by `cairn index`

    name = vc.name
    if not vi.is_built:
        return None
    if not semantic:
        return VaultSearchSide(name, vi.keyword, unavailable_reason="keyword search", links=vi.links)
    if vv is None or len(vv.index) == 0 or emb is None:
        if embedding is not None:
            done, total = embedding
            pct = f" {int(done * 100 / total)}%" if total else ""
            return VaultSearchSide(name, vi.keyword, semantic_note=f"{name}: being embedded{pct}; keyword results until it is done", links=vi.links)
        reason = problem or ("vector index " + (vv.status if vv else "missing"))
        return VaultSearchSide(name, vi.keyword, unavailable_reason=reason, links=vi.links)
    note = partial_note(vc, vi, vv, embedding is not None)
    from core.index import name_vectors, vocab_vectors

    vocab = vocab_vectors.cached(vv.directory)
    if vocab is not None and vocab.model_id != emb.model_id:
        vocab = None
    names = name_vectors.cached(vv.directory)
    if names is not None and names.model_id != emb.model_id:
        names = None
    return VaultSearchSide(name, vi.keyword, BoundVectors(vv, vi), emb, semantic_note=note, links=vi.links, vocabulary=vocab, names=names)


def partial_note(vc: VaultConfig, vi: VaultIndex, vv: VaultVectors, embedding: bool) -> str | None:
    """A search's warning for a vault whose passages are not all embedded, in the status bar's words.

    It says what semantic search covers: after the first pass every note has a summary vector
    while the passages' share may still be 0% (see `core.index.note_coverage`).
    """
    if vv.fraction_complete >= 1.0:
        return None
    from core.index.note_coverage import note_cover

    covered = note_cover(vv, embeddable_files(vc, vi.files)).words(int(vv.fraction_complete * 100))
    if embedding:
        return f"{vc.name}: being embedded ({covered}); results may change when it is done"
    return f"{vc.name}: semantic: {covered}"
