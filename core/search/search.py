"""Hybrid search over one or more vaults: BM25F list + vector list, fused by a score blend (or RRF).

Both lists see the same filters before fusion. Every hit carries its ranks,
raw scores and the named terms that add up to its final score. What moves hits
after fusion (re-scoring, per-note cap, snippets, guards) is in `core.search.rescore`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from core.base.models import (
    Candidate,
    ChunkRef,
    Fusion,
    Hit,
    HitKind,
    ParsedQuery,
    RankedScore,
    SearchFilters,
    SearchMode,
    SearchResponse,
    SearchSettings,
    Term,
    id_order,
    split_chunk_id,
)
from core.index.analysis import Stemmer
from core.index.keyword_index import KeywordHit, KeywordIndex, StoredChunk
from core.index.link_graph import LinkGraph
from core.search.feedback import search_with_feedback
from core.search.fusion import Fused, RankedList, ScoredList, fuse_convex, fuse_rrf
from core.search.language_preference import prefer_query_language
from core.search.phrase_rank import lift_phrase_hits
from core.search.profiles import Profile, get_profile, keyword_share
from core.search.query import check_query_size, content_terms, parse_query, unknown_keys_as_words
from core.search.rescore import cap_per_note, guard, rescore, shortlist
from core.search.result_groups import group_results, label_kinds
from core.search.title_boost import title_boosts
from core.vault.language import query_language

if TYPE_CHECKING:
    import numpy as np  # the vector side's; a keyword search never imports it

MODES = tuple(SearchMode)  # kept for callers that list the choices
FALLBACK_WARNING = "semantic unavailable; fallback=keyword"
TITLE_BOOST_DEPTH = 3  # with a title boost, candidates looked at: k times this
# Weight of the vector list (on top of the profile's) when every searched embedder declares
# languages and the query is in none of them: MiniLM's vectors for a Chinese query are noise.
# Measured on the tldr golden sets (hybrid top-3, zh/ja): 1.0 → 0.30/0.60, see the commit.
FOREIGN_QUERY_VECTOR_WEIGHT = 0.0
NO_EXACT_MATCHES = "no exact matches; showing related notes"
RESCORE_POOL = 30  # candidates that get the text signals (links, query words) before the final cut


class VectorSearcher(Protocol):
    """One vault's vector side, as the search needs it."""

    def search(self, query: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]: ...


class QueryEmbedder(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class VaultSearchSide:
    """What search needs of one vault: its keyword index and, when ready, its vectors."""

    name: str
    keyword: KeywordIndex
    vectors: VectorSearcher | None = None
    embedder: QueryEmbedder | None = None
    semantic_note: str | None = None  # e.g. "semantic index 40% complete"
    unavailable_reason: str | None = None  # why this vault has no semantic side
    links: LinkGraph | None = None  # aliases, for the title boost (core.search.title_boost)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search. The ranking settings default to None = "the user's": `Engine.search` fills
    them from the config, so no caller has to copy them (and none can forget to)."""

    query: str
    mode: SearchMode | str = SearchMode.HYBRID
    k: int = 10
    filters: SearchFilters = SearchFilters()
    profile: str | None = None
    per_note_cap: int | None = None
    top_n: int | None = None
    rrf_k: int | None = None
    today: dt.date | None = None
    title_boost: float | None = None  # weight of the title/alias boost; 0 = off, None = the engine's setting
    fusion: Fusion | str | None = None  # "blend" (normalised scores) or "rrf"; None = the user's
    keyword_share: float | None = None  # blend: the keyword list's share; None = the user's (or the profile's)
    feedback: bool = True  # hybrid: pseudo-relevance feedback on the keyword side (core.search.feedback)
    # A list for people (app, `cairn search`, MCP search): matches first, then at most a few notes
    # found by meaning only (core.search.result_groups). Off for Ask and evaluation, which want the
    # ranking as it is; their hits still say which kind they are.
    grouped: bool = False

    def settings(self, defaults: SearchSettings = SearchSettings()) -> SearchSettings:
        """The settings this request runs with: its own where set, else `defaults`."""
        return SearchSettings(
            profile=defaults.profile if self.profile is None else self.profile,
            per_note_cap=defaults.per_note_cap if self.per_note_cap is None else self.per_note_cap,
            top_n=defaults.top_n if self.top_n is None else self.top_n,
            rrf_k=defaults.rrf_k if self.rrf_k is None else self.rrf_k,
            title_boost=defaults.title_boost if self.title_boost is None else self.title_boost,
            fusion=defaults.fusion if self.fusion is None else Fusion.parse(self.fusion),
            keyword_share=defaults.keyword_share if self.keyword_share is None else self.keyword_share,
        )

    def with_defaults(self, defaults: SearchSettings) -> SearchRequest:
        """This request with every unset ranking setting taken from `defaults`."""
        s = self.settings(defaults)
        return replace(
            self,
            profile=s.profile,
            per_note_cap=s.per_note_cap,
            top_n=s.top_n,
            rrf_k=s.rrf_k,
            title_boost=s.title_boost,
            fusion=s.fusion,
            keyword_share=s.keyword_share,
        )


@dataclass
class _Timer:
    timings: dict[str, float] = field(default_factory=dict)

    def lap(self, name: str, t0: float) -> float:
        now = time.perf_counter()
        self.timings[name] = round((now - t0) * 1000, 3)
        return now


def search(request: SearchRequest, sides: Sequence[VaultSearchSide]) -> SearchResponse:  # noqa: C901, PLR0915 - being split into named ranking stages (#27, h-relevance)
    """Run one search over the given vaults. A vault without vectors is searched by keyword only."""
    timer = _Timer()
    t_start = t = time.perf_counter()
    try:
        requested = SearchMode(request.mode)
    except ValueError:
        raise ValueError(f"unknown mode {request.mode!r}; choose one of {', '.join(MODES)}") from None
    settings = request.settings()
    top_n = max(settings.top_n, request.k)  # fewer candidates than wanted hits would cut the list short
    profile = get_profile(settings.profile)
    check_query_size(request.query)
    parsed_result = parse_query(request.query, request.filters)
    if parsed_result.query.filters.where:
        parsed_result = unknown_keys_as_words(parsed_result, request.filters, lambda key: _has_property(sides, key))
    parsed = parsed_result.query
    # The keyword side and the highlights see only the words that carry the subject; the
    # embedding still reads the whole question.
    keyword_parsed = replace(parsed, terms=content_terms(parsed.terms))
    warnings = list(parsed_result.warnings)
    sides = _select_vaults(sides, parsed.filters, warnings)
    t = timer.lap("parse", t)

    mode = requested
    wants_vectors = mode in (SearchMode.HYBRID, SearchMode.SEMANTIC) and bool(parsed.text.strip())
    vector_ready = [s for s in sides if s.vectors is not None and s.embedder is not None]
    # A vault being embedded has a note ("being embedded 40%") instead of a reason: never "unavailable".
    preparing = [s for s in sides if s not in vector_ready and s.semantic_note and not s.unavailable_reason]
    if wants_vectors and not vector_ready:
        reasons = sorted({f"{s.name}: {s.unavailable_reason or 'no embeddings have been built yet'}" for s in sides if s not in preparing})
        if reasons or not preparing:
            warnings.append(f"{FALLBACK_WARNING} ({'; '.join(reasons) or 'no vault selected'})")
        warnings.extend(s.semantic_note for s in preparing if s.semantic_note)
        mode = SearchMode.KEYWORD
    elif wants_vectors:
        warnings.extend(s.semantic_note for s in sides if s.semantic_note)
        warnings.extend(
            f"vault {s.name}: semantic unavailable ({s.unavailable_reason or 'no embeddings yet'}); keyword only"
            for s in sides
            if s not in vector_ready and s not in preparing
        )
    if requested == SearchMode.SEMANTIC and not parsed.text.strip():
        mode = SearchMode.KEYWORD

    keyword_hits: list[KeywordHit] = []
    fed_back: list[str] = []  # feedback words, named in the keyword term of every hit
    if mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
        for side in sides:
            found = side.keyword.search(keyword_parsed, parsed.filters, top_n)
            if request.feedback and mode == SearchMode.HYBRID:  # keyword mode: see core.search.feedback
                found, words = search_with_feedback(side.keyword, keyword_parsed, parsed.filters, top_n, found)
                fed_back += [w for w in words if w not in fed_back]
            keyword_hits.extend(found)
        keyword_hits.sort(key=lambda h: (-h.score, *id_order(h.chunk_id)))
        keyword_hits = keyword_hits[: top_n]
        t = timer.lap("keyword", t)

    vector_hits: list[tuple[str, float]] = []
    if mode in (SearchMode.HYBRID, SearchMode.SEMANTIC):
        from core.search.query_vectors import embed_query_cached

        qvecs: dict[int, np.ndarray] = {}
        for side in vector_ready:
            assert side.vectors is not None and side.embedder is not None
            if id(side.embedder) not in qvecs:  # one query embedding per distinct model
                qvecs[id(side.embedder)] = embed_query_cached(side.embedder, parsed.text)
        t = timer.lap("embed_query", t)
        for side in vector_ready:
            assert side.vectors is not None
            vector_hits.extend(side.vectors.search(qvecs[id(side.embedder)], parsed.filters, top_n))
        vector_hits.sort(key=lambda h: (-h[1], *id_order(h[0])))
        vector_hits = vector_hits[: top_n]
        t = timer.lap("vector", t)

    vector_scale = 1.0
    if vector_hits and mode == SearchMode.HYBRID:
        foreign = _foreign_query(parsed.text, vector_ready)
        if foreign:
            vector_scale = FOREIGN_QUERY_VECTOR_WEIGHT
            warnings.append(f"the embedding model does not read {foreign}: meaning-based matches count less")
    keyword_name = f"keyword + feedback ({', '.join(fed_back)})" if fed_back else "keyword"
    fused = _fuse(settings, profile, mode, keyword_hits, vector_hits, vector_scale, keyword_name)
    if not parsed.text.strip():  # filter-only browse: newest first
        fused = _browse_order(keyword_hits)
    t = timer.lap("fuse", t)

    if not profile.freshness_weight:
        # Fetch stored fields only for what can be shown or re-scored: a vector-only candidate costs a
        # lookup. A title boost may lift a hit from a little below k, so it looks a little further.
        boosting = bool(settings.title_boost and settings.title_boost > 0)
        fused = shortlist(fused, max(request.k * (TITLE_BOOST_DEPTH if boosting else 1), RESCORE_POOL), settings.per_note_cap)
    stored = _stored_chunks(sides, keyword_hits, [f.chunk_id for f in fused])
    kw_rank = {h.chunk_id: RankedScore(i, h.score) for i, h in enumerate(keyword_hits, 1)}
    vec_rank = {cid: RankedScore(i, score) for i, (cid, score) in enumerate(vector_hits, 1)}
    stems = _query_stems(keyword_parsed, sides)
    today = request.today or dt.date.today()
    hits = _assemble(fused, stored, kw_rank, vec_rank, profile, today, keep_order=not parsed.text.strip(), languages=parsed.filters.languages)
    if settings.title_boost and settings.title_boost > 0 and parsed.text.strip():
        graphs = {s.name: s.links for s in sides if s.links is not None}
        hits = title_boosts(hits, parsed.text, graphs, settings.title_boost)
    stemmer = sides[0].keyword.stemmer if sides else Stemmer()
    # Semantic mode never looks for the words, so it makes no claim about them.
    exact_matches = bool(keyword_hits) or not parsed.text.strip() or mode == SearchMode.SEMANTIC
    if parsed.text.strip():
        hits = rescore(prefer_query_language(hits, parsed.text), stems, stemmer)
    if mode == SearchMode.HYBRID:
        hits = lift_phrase_hits(hits, parsed.phrases)
    if not exact_matches:
        warnings.append(NO_EXACT_MATCHES)
    compare = bool(parsed.text.strip()) and mode != SearchMode.SEMANTIC
    hits = cap_per_note(hits, settings.per_note_cap)
    if request.grouped:
        hits = list(group_results(hits, stems, stemmer, k=request.k, compare=compare).hits)
    else:
        hits = label_kinds(hits[: request.k], stems, stemmer, compare=compare)
    hits = guard(hits, stems, stemmer, resort=bool(parsed.text.strip()), phrases=parsed.phrases)
    if request.grouped:
        hits.sort(key=lambda h: h.kind != HitKind.MATCH)  # stable: matches stay above related notes
    timer.lap("assemble", t)
    timer.timings["total"] = round((time.perf_counter() - t_start) * 1000, 3)
    return SearchResponse(
        query=request.query,
        mode=mode,
        requested_mode=requested,
        hits=tuple(hits),
        warnings=tuple(dict.fromkeys(warnings)),
        timings_ms=timer.timings,
        parsed=parsed,
        keyword_candidates=tuple(Candidate(h.chunk_id, i, h.score) for i, h in enumerate(keyword_hits, 1)),
        vector_candidates=tuple(Candidate(cid, i, s) for i, (cid, s) in enumerate(vector_hits, 1)),
        profile=profile.name,
        settings=replace(settings, top_n=top_n),
        exact_matches=exact_matches,
    )


def _fuse(
    settings: SearchSettings,
    profile: Profile,
    mode: str,
    keyword_hits: list[KeywordHit],
    vector_hits: list[tuple[str, float]],
    vector_scale: float = 1.0,
    keyword_name: str = "keyword",
) -> list[Fused]:
    """Hybrid: the user's fusion (a blend of normalised scores, or RRF); one list: its own order.

    `vector_scale` lowers the vector side's say (0 when the model cannot read the query's language);
    `keyword_name` names the keyword list in every term (with its feedback words, if any).
    """
    hybrid = mode == SearchMode.HYBRID
    if settings.fusion == Fusion.RRF or not hybrid:
        lists = []
        if keyword_hits:
            lists.append(RankedList(keyword_name, profile.keyword_weight if hybrid else 1.0, [h.chunk_id for h in keyword_hits]))
        if vector_hits:
            lists.append(RankedList("vector", (profile.vector_weight * vector_scale) if hybrid else 1.0, [cid for cid, _ in vector_hits]))
        return fuse_rrf(lists, settings.rrf_k)
    share = keyword_share(settings)
    return fuse_convex(
        [
            ScoredList(keyword_name, share, [(h.chunk_id, h.score) for h in keyword_hits], floor_at_min=False),
            ScoredList("meaning", round((1.0 - share) * vector_scale, 6), vector_hits),
        ]
    )


def _select_vaults(sides: Sequence[VaultSearchSide], filters: SearchFilters, warnings: list[str]) -> list[VaultSearchSide]:
    if not filters.vaults:
        return list(sides)
    wanted = set(filters.vaults)
    unknown = wanted - {s.name for s in sides}
    if unknown:
        warnings.append(f"no vault named {', '.join(sorted(unknown))}")
    return [s for s in sides if s.name in wanted]


def _browse_order(keyword_hits: list[KeywordHit]) -> list[Fused]:
    ordered = sorted(keyword_hits, key=lambda h: id_order(h.chunk_id))
    ordered.sort(key=lambda h: (h.stored.date if h.stored else None) or "", reverse=True)  # stable: newest first
    return [Fused(h.chunk_id, 0.0, ()) for h in ordered]


def _stored_chunks(sides: Sequence[VaultSearchSide], keyword_hits: list[KeywordHit], wanted_ids: list[str]) -> dict[str, StoredChunk]:
    stored = {h.chunk_id: h.stored for h in keyword_hits if h.stored is not None}
    missing = [cid for cid in wanted_ids if cid not in stored]
    if missing:
        by_vault: dict[str, list[str]] = {}
        for cid in missing:
            by_vault.setdefault(split_chunk_id(cid)[0], []).append(cid)
        for side in sides:
            if side.name in by_vault:
                stored.update(side.keyword.stored(by_vault[side.name]))
    return stored


def _foreign_query(text: str, sides: Sequence[VaultSearchSide]) -> str:
    """The query's language when no searched embedder reads it, else ""."""
    known = [getattr(s.embedder, "languages", None) for s in sides]
    if not known or any(langs is None for langs in known):
        return ""
    lang = query_language(text)
    return lang if lang and all(langs is not None and lang not in langs for langs in known) else ""


def _query_stems(parsed: ParsedQuery, sides: Sequence[VaultSearchSide]) -> frozenset[str]:
    """The query's terms in every language of the searched vaults (what snippets mark)."""
    text = " ".join(list(parsed.terms) + list(parsed.phrases))
    if not text.strip():
        return frozenset()
    return frozenset(t for side in sides for t in side.keyword.query_terms(text))


def _assemble(
    fused: list[Fused],
    stored: dict[str, StoredChunk],
    kw_rank: dict[str, RankedScore],
    vec_rank: dict[str, RankedScore],
    profile: Profile,
    today: dt.date,
    *,
    keep_order: bool = False,
    languages: tuple[str, ...] = (),
) -> list[Hit]:
    hits: list[Hit] = []
    wanted = {lang.lower() for lang in languages}
    for f in fused:
        chunk = stored.get(f.chunk_id)
        if chunk is None:  # a vector whose chunk left the keyword index: stale, skip it
            continue
        if wanted and chunk.lang not in wanted:  # `lang:` — the vector list cannot tell
            continue
        terms = list(f.terms)
        boost = profile.freshness_boost(chunk.date, today)
        if boost:
            terms.append(Term(f"freshness boost ({profile.name})", boost))
        score = sum(t.value for t in terms)
        hits.append(
            Hit(
                chunk=ChunkRef(chunk.vault, chunk.rel_path, chunk.ordinal, chunk.heading_path),
                score=score,
                title=chunk.title,
                snippet="",
                start_byte=chunk.start_byte,
                end_byte=chunk.end_byte,
                bm25=kw_rank.get(f.chunk_id),
                vector=vec_rank.get(f.chunk_id),
                contributions=tuple(terms),
                tags=chunk.tags,
                date=chunk.date,
                doc_type=chunk.doc_type,
                text=chunk.body,
                confidentiality=chunk.confidentiality,
                page=chunk.page,
                lang=chunk.lang,
            )
        )
    if not keep_order:  # a filter-only browse keeps its newest-first order
        hits.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return hits


def _has_property(sides: Sequence[VaultSearchSide], key: str) -> bool:
    """Whether any searched vault has a note with property `key` (its bare term in `props`)."""
    return any(s.keyword.doc_frequencies([key], field="props").get(key, 0) > 0 for s in sides)
