"""Hybrid search over one or more vaults: a BM25F list and a vector list, fused into one ranking.

Both lists see the same filters before fusion. Every hit carries its ranks,
raw scores and the named terms that add up to its final score. What moves hits
after fusion is a list of named stages in `core.search.stages` (shortlist, assemble, title
boost, language, re-score, phrase lift, cap, guard).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.base.models import (
    Candidate,
    Fusion,
    ParsedQuery,
    QueryCorrection,
    SearchFilters,
    SearchMode,
    SearchResponse,
    SearchSettings,
    Term,
    id_order,
)
from core.index.keyword_index import KeywordHit
from core.search.evidence import adapted_share, explain
from core.search.expansion import Expansion, vocabulary_expansion
from core.search.feedback import search_with_feedback
from core.search.fusing import fuse_lists, measure_evidence
from core.search.fusion import Fused, keep_meaning_hits
from core.search.name_meaning import name_terms, name_weight, side_similarities
from core.search.passages import aggregate_notes, side_alike
from core.search.profiles import Profile, get_profile, keyword_share
from core.search.query import check_query_size, content_terms, parse_query, unknown_keys_as_words
from core.search.sides import QueryEmbedder, VaultSearchSide, VectorSearcher
from core.search.spelling import correct_query, unknown_words
from core.search.stages import RankContext, rank
from core.vault.language import confident_query_language, query_language

if TYPE_CHECKING:
    import numpy as np  # the vector side's; a keyword search never imports it

MODES = tuple(SearchMode)  # kept for callers that list the choices
__all__ = ["QueryEmbedder", "SearchRequest", "VaultSearchSide", "VectorSearcher", "search"]
FALLBACK_WARNING = "semantic unavailable; fallback=keyword"
# Weight of the vector list (on top of the profile's) when every searched embedder declares
# languages and the query is in none of them: MiniLM's vectors for a Chinese query are noise.
# Measured on the tldr golden sets (hybrid top-3, zh/ja): 1.0 → 0.30/0.60, see the commit.
FOREIGN_QUERY_VECTOR_WEIGHT = 0.0
FEEDBACK_TRUST_DEPTH = 10  # feedback reads a keyword chunk only if its note is among the vector list's first this many notes
NO_EXACT_MATCHES = "no exact matches; showing related notes"


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
    spelling: bool = True  # correct words the vault lacks from its own words (core.search.spelling); False: as typed
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
    query_vectors: dict[int, np.ndarray] = field(default_factory=dict)  # one per distinct embedder
    also_searched: list[str] = field(default_factory=list)  # the vault's words nearest the query's meaning

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
    correction = _spelling(request, sides)
    plan = _plan(replace(request, query=correction.corrected) if correction else request, sides)
    if correction:
        plan.warnings.insert(0, correction.message)
    t = timer.lap("parse", t)
    vector_hits = _vector_side(plan, timer)
    t = time.perf_counter()
    keyword_hits, fed_back = _keyword_side(plan, request.feedback, vector_hits)
    if plan.mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
        t = timer.lap("keyword", t)
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
        grouped=request.grouped,
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
        correction=correction,
    )


def _spelling(request: SearchRequest, sides: Sequence[VaultSearchSide]) -> QueryCorrection | None:
    """The query with its typos corrected from the searched vaults' words, if it has any."""
    if not request.spelling:
        return None
    check_query_size(request.query)
    parsed = parse_query(request.query, request.filters).query
    words = content_terms(parsed.terms)
    indexes = [s.keyword for s in _select_vaults(sides, parsed.filters, [])]
    unknown = unknown_words(words, indexes)
    if not unknown:
        return None  # the common case: every word is the vault's (no language guess needed)
    # The confident guess: `query_language` calls any Latin-script query English, so a German
    # question over German pages had its function word "eines" "corrected" to "lein".
    lang = confident_query_language(request.query)
    if lang and lang != "en" and any(lang in index.languages() for index in indexes):
        return None  # a question in another language the vault holds: its words are no English typos
    return correct_query(request.query, unknown, indexes, parsed.filters)


def _plan(request: SearchRequest, sides: Sequence[VaultSearchSide]) -> _Plan:
    """Parse the query, pick the vaults, and settle the mode (hybrid falls back to keyword without vectors)."""
    try:
        requested = SearchMode(request.mode)
    except ValueError:
        raise ValueError(f"unknown mode {request.mode!r}; choose one of {', '.join(MODES)}") from None
    settings = request.settings()
    check_query_size(request.query)
    parsed_result = parse_query(request.query, request.filters)
    if parsed_result.query.filters.where:
        parsed_result = unknown_keys_as_words(parsed_result, request.filters, lambda key: _has_property(sides, key))
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
    if requested == SearchMode.SEMANTIC and not text.strip():
        mode = SearchMode.KEYWORD
    return mode


def _keyword_side(plan: _Plan, feedback: bool, vector_hits: list[tuple[str, float]]) -> tuple[list[KeywordHit], list[str]]:
    """The keyword list over every vault (best first, top_n long) and the feedback words it used.

    Feedback reads only chunks of notes the vector side ranks high (when it ran).
    """
    keyword_hits: list[KeywordHit] = []
    fed_back: list[str] = []  # feedback words, named in the keyword term of every hit
    if plan.mode not in (SearchMode.HYBRID, SearchMode.KEYWORD):
        return keyword_hits, fed_back
    filters = plan.parsed.filters
    trusted = _trusted_by_meaning(vector_hits) if vector_hits else None
    for side in plan.sides:
        extra = _expansion(plan, side)
        found = side.keyword.search(plan.keyword_parsed, filters, plan.top_n, expansion=extra.terms or None)
        plan.also_searched += [w for w in extra.words if w not in plan.also_searched]
        if feedback and plan.mode == SearchMode.HYBRID:  # keyword mode: see core.search.feedback
            found, words = search_with_feedback(
                side.keyword, plan.keyword_parsed, filters, plan.top_n, found, trusted=trusted, base=extra.terms
            )
            fed_back += [w for w in words if w not in fed_back]
        keyword_hits.extend(found)
    keyword_hits.sort(key=lambda h: (-h.score, *id_order(h.chunk_id)))
    return keyword_hits[: plan.top_n], fed_back


def _expansion(plan: _Plan, side: VaultSearchSide) -> Expansion:
    """Hybrid: the vault's words nearest the query's meaning, for this vault's keyword search."""
    qvec = plan.query_vectors.get(id(side.embedder)) if side.embedder is not None else None
    if plan.mode != SearchMode.HYBRID or side.vocabulary is None or qvec is None or plan.parsed.phrases:
        return Expansion()
    asked = set(side.keyword.query_terms(" ".join(plan.keyword_parsed.terms)))
    return vocabulary_expansion(side.vocabulary, qvec, asked, side.keyword.query_terms)


def _trusted_by_meaning(vector_hits: list[tuple[str, float]]) -> Callable[[str], bool]:
    """Whether a chunk's note is among the vector side's first FEEDBACK_TRUST_DEPTH notes."""
    notes = set(list(dict.fromkeys(id_order(cid)[::2] for cid, _ in vector_hits))[:FEEDBACK_TRUST_DEPTH])
    return lambda cid: id_order(cid)[::2] in notes


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
    plan.query_vectors = qvecs
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
    if plan.also_searched:
        keyword_name += f" (also searched: {', '.join(plan.also_searched)})"
    adaptive = plan.mode == SearchMode.HYBRID and vector_scale > 0 and keyword_hits and vector_hits
    if not adaptive or plan.settings.fusion != Fusion.BLEND or plan.settings.keyword_share is not None:
        return fuse_lists(plan.settings, plan.profile, plan.mode, keyword_hits, vector_hits, vector_scale, keyword_name)
    evidence = measure_evidence([side.keyword for side in plan.sides], plan.keyword_parsed.terms, keyword_hits, vector_hits)
    share = adapted_share(keyword_share(plan.settings), evidence)
    fused = fuse_lists(plan.settings, plan.profile, plan.mode, keyword_hits, vector_hits, vector_scale, keyword_name, share=share)
    why = Term(explain(evidence, share), 0.0)
    fused = aggregate_notes([Fused(f.chunk_id, f.score, f.terms + (why,)) for f in fused], alike=side_alike(plan.sides))
    fused = name_terms(fused, side_similarities(plan.sides, plan.query_vectors), weight=name_weight(evidence))
    return keep_meaning_hits(fused, [cid for cid, _ in vector_hits])


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


def _has_property(sides: Sequence[VaultSearchSide], key: str) -> bool:
    """Whether any searched vault has a note with property `key` (its bare term in `props`)."""
    return any(s.keyword.doc_frequencies([key], field="props").get(key, 0) > 0 for s in sides)
