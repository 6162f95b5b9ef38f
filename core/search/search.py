"""Hybrid search over one or more vaults: a BM25F list and a vector list, fused into one ranking.

Both lists see the same filters before fusion. Every hit carries its ranks,
raw scores and the named terms that add up to its final score. What moves hits
after fusion is a list of named stages in `core.search.stages` (shortlist, assemble, title
boost, language, re-score, phrase lift, cap, guard).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from core.base.models import (
    Candidate,
    Fusion,
    ParsedQuery,
    SearchFilters,
    SearchMode,
    SearchResponse,
    SearchSettings,
    id_order,
)
from core.index.keyword_index import KeywordHit, KeywordIndex
from core.index.link_graph import LinkGraph
from core.search.feedback import search_with_feedback
from core.search.fusion import Fused, RankedList, ScoredList, fuse_convex, fuse_rrf
from core.search.profiles import Profile, get_profile, keyword_share
from core.search.query import check_query_size, content_terms, parse_query
from core.search.stages import RankContext, rank
from core.vault.language import query_language

if TYPE_CHECKING:
    import numpy as np  # the vector side's; a keyword search never imports it

MODES = tuple(SearchMode)  # kept for callers that list the choices
FALLBACK_WARNING = "semantic unavailable; fallback=keyword"
# Weight of the vector list (on top of the profile's) when every searched embedder declares
# languages and the query is in none of them: MiniLM's vectors for a Chinese query are noise.
# Measured on the tldr golden sets (hybrid top-3, zh/ja): 1.0 → 0.30/0.60, see the commit.
FOREIGN_QUERY_VECTOR_WEIGHT = 0.0
NO_EXACT_MATCHES = "no exact matches; showing related notes"


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


@dataclass
class _Plan:
    """One search's resolved shape: the mode it runs in, its settings and query, the vaults searched."""

    requested: SearchMode
    mode: SearchMode
    settings: SearchSettings
    top_n: int
    profile: Profile
    parsed: ParsedQuery
    keyword_parsed: ParsedQuery  # the words that carry the subject (stop-words out)
    sides: list[VaultSearchSide]
    vector_ready: list[VaultSearchSide]
    warnings: list[str]

    @property
    def text(self) -> str:
        return self.parsed.text.strip()


def search(request: SearchRequest, sides: Sequence[VaultSearchSide]) -> SearchResponse:
    """Run one search over the given vaults. A vault without vectors is searched by keyword only.

    The request flow: parse, the keyword list, the vector list, fusion, then the
    named stages of `core.search.stages` (shortlist … guard).
    """
    timer = _Timer()
    t_start = t = time.perf_counter()
    plan = _plan(request, sides)
    t = timer.lap("parse", t)
    keyword_hits, fed_back = _keyword_side(plan, request.feedback)
    if plan.mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
        t = timer.lap("keyword", t)
    vector_hits = _vector_side(plan, timer)
    t = time.perf_counter()
    fused = _fused(plan, keyword_hits, vector_hits, fed_back)
    t = timer.lap("fuse", t)
    ctx = RankContext(
        k=request.k,
        text=plan.parsed.text,
        phrases=plan.parsed.phrases,
        languages=plan.parsed.filters.languages,
        mode=plan.mode,
        settings=plan.settings,
        profile=plan.profile,
        sides=plan.sides,
        keyword_hits=keyword_hits,
        vector_hits=vector_hits,
        stems=_query_stems(plan.keyword_parsed, plan.sides),
        today=request.today or dt.date.today(),
    )
    hits = rank(ctx, fused)
    # Semantic mode never looks for the words, so it makes no claim about them.
    exact_matches = bool(keyword_hits) or not plan.text or plan.mode == SearchMode.SEMANTIC
    if not exact_matches:
        plan.warnings.append(NO_EXACT_MATCHES)
    timer.lap("assemble", t)
    timer.timings["total"] = round((time.perf_counter() - t_start) * 1000, 3)
    return SearchResponse(
        query=request.query,
        mode=plan.mode,
        requested_mode=plan.requested,
        hits=tuple(hits),
        warnings=tuple(dict.fromkeys(plan.warnings)),
        timings_ms=timer.timings,
        parsed=plan.parsed,
        keyword_candidates=tuple(Candidate(h.chunk_id, i, h.score) for i, h in enumerate(keyword_hits, 1)),
        vector_candidates=tuple(Candidate(cid, i, s) for i, (cid, s) in enumerate(vector_hits, 1)),
        profile=plan.profile.name,
        settings=replace(plan.settings, top_n=plan.top_n),
        exact_matches=exact_matches,
    )


def _plan(request: SearchRequest, sides: Sequence[VaultSearchSide]) -> _Plan:
    """Parse the query, pick the vaults, and settle the mode (hybrid falls back to keyword without vectors)."""
    try:
        requested = SearchMode(request.mode)
    except ValueError:
        raise ValueError(f"unknown mode {request.mode!r}; choose one of {', '.join(MODES)}") from None
    settings = request.settings()
    check_query_size(request.query)
    parsed_result = parse_query(request.query, request.filters)
    parsed = parsed_result.query
    warnings = list(parsed_result.warnings)
    chosen = _select_vaults(sides, parsed.filters, warnings)
    vector_ready = [s for s in chosen if s.vectors is not None and s.embedder is not None]
    return _Plan(
        requested=requested,
        mode=_effective_mode(requested, parsed.text, chosen, vector_ready, warnings),
        settings=settings,
        top_n=max(settings.top_n, request.k),  # fewer candidates than wanted hits would cut the list short
        profile=get_profile(settings.profile),
        parsed=parsed,
        # The keyword side and the highlights see only the words that carry the subject; the
        # embedding still reads the whole question.
        keyword_parsed=replace(parsed, terms=content_terms(parsed.terms)),
        sides=chosen,
        vector_ready=vector_ready,
        warnings=warnings,
    )


def _effective_mode(
    requested: SearchMode, text: str, sides: list[VaultSearchSide], vector_ready: list[VaultSearchSide], warnings: list[str]
) -> SearchMode:
    """The mode the search can run in, with a warning for every vault that has no vectors."""
    mode = requested
    wants_vectors = mode in (SearchMode.HYBRID, SearchMode.SEMANTIC) and bool(text.strip())
    if wants_vectors and not vector_ready:
        reasons = sorted({f"{s.name}: {s.unavailable_reason or 'no embeddings have been built yet'}" for s in sides})
        warnings.append(f"{FALLBACK_WARNING} ({'; '.join(reasons) or 'no vault selected'})")
        mode = SearchMode.KEYWORD
    elif wants_vectors:
        warnings.extend(s.semantic_note for s in sides if s.semantic_note)
        warnings.extend(
            f"vault {s.name}: semantic unavailable ({s.unavailable_reason or 'no embeddings yet'}); keyword only"
            for s in sides
            if s not in vector_ready
        )
    if requested == SearchMode.SEMANTIC and not text.strip():
        mode = SearchMode.KEYWORD
    return mode


def _keyword_side(plan: _Plan, feedback: bool) -> tuple[list[KeywordHit], list[str]]:
    """The keyword list over every vault (best first, top_n long) and the feedback words it used."""
    keyword_hits: list[KeywordHit] = []
    fed_back: list[str] = []  # feedback words, named in the keyword term of every hit
    if plan.mode not in (SearchMode.HYBRID, SearchMode.KEYWORD):
        return keyword_hits, fed_back
    filters = plan.parsed.filters
    for side in plan.sides:
        found = side.keyword.search(plan.keyword_parsed, filters, plan.top_n)
        if feedback and plan.mode == SearchMode.HYBRID:  # keyword mode: see core.search.feedback
            found, words = search_with_feedback(side.keyword, plan.keyword_parsed, filters, plan.top_n, found)
            fed_back += [w for w in words if w not in fed_back]
        keyword_hits.extend(found)
    keyword_hits.sort(key=lambda h: (-h.score, *id_order(h.chunk_id)))
    return keyword_hits[: plan.top_n], fed_back


def _vector_side(plan: _Plan, timer: _Timer) -> list[tuple[str, float]]:
    """The vector list over every vault with vectors: one query embedding per distinct model."""
    if plan.mode not in (SearchMode.HYBRID, SearchMode.SEMANTIC):
        return []
    from core.search.query_vectors import embed_query_cached

    t = time.perf_counter()
    qvecs: dict[int, np.ndarray] = {}
    for side in plan.vector_ready:
        assert side.vectors is not None and side.embedder is not None
        if id(side.embedder) not in qvecs:  # one query embedding per distinct model
            qvecs[id(side.embedder)] = embed_query_cached(side.embedder, plan.parsed.text)
    t = timer.lap("embed_query", t)
    vector_hits: list[tuple[str, float]] = []
    for side in plan.vector_ready:
        assert side.vectors is not None
        vector_hits.extend(side.vectors.search(qvecs[id(side.embedder)], plan.parsed.filters, plan.top_n))
    vector_hits.sort(key=lambda h: (-h[1], *id_order(h[0])))
    timer.lap("vector", t)
    return vector_hits[: plan.top_n]


def _fused(plan: _Plan, keyword_hits: list[KeywordHit], vector_hits: list[tuple[str, float]], fed_back: list[str]) -> list[Fused]:
    """Both lists fused (the vector side muted for a language its model cannot read); a browse: newest first."""
    if not plan.text:  # filter-only browse: newest first
        return _browse_order(keyword_hits)
    vector_scale = 1.0
    if vector_hits and plan.mode == SearchMode.HYBRID:
        foreign = _foreign_query(plan.parsed.text, plan.vector_ready)
        if foreign:
            vector_scale = FOREIGN_QUERY_VECTOR_WEIGHT
            plan.warnings.append(f"the embedding model does not read {foreign}: meaning-based matches count less")
    keyword_name = f"keyword + feedback ({', '.join(fed_back)})" if fed_back else "keyword"
    return _fuse(plan.settings, plan.profile, plan.mode, keyword_hits, vector_hits, vector_scale, keyword_name)



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
