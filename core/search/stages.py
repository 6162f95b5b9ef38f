"""The ranking after fusion, as a visible list of named stages (`STAGES`).

Fusion gives one scored list of chunk ids; what the user sees is shaped by the
stages below, in this order: a shortlist (the per-note cut, before any stored
text is fetched), the hits assembled from stored chunks, the title/alias boost,
the query's language, the text re-scoring, the quoted-phrase lift, one row per
note, the passage each row shows, the first k rows labelled (or grouped) as matches and
related notes, and the guard (snippets, masked secrets, injection penalty). Each stage is
a small function of the shared `RankContext` and the `RankState` it hands on,
so a new step (grouping, a re-ranker) is one more entry in the list, and each
can be tested or timed on its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.base.models import ChunkRef, Hit, HitKind, RankedScore, SearchMode, SearchSettings, Term, split_chunk_id
from core.index.analysis import Stemmer
from core.index.keyword_index import KeywordHit, StoredChunk
from core.search.fusion import Fused
from core.search.language_preference import prefer_query_language
from core.search.passages import choose_passages
from core.search.phrase_rank import lift_phrase_hits
from core.search.profiles import Profile
from core.search.rescore import cap_per_note, guard, rescore, shortlist
from core.search.result_groups import group_results, label_kinds
from core.search.title_boost import title_boosts

if TYPE_CHECKING:
    from core.search.sides import VaultSearchSide

TITLE_BOOST_DEPTH = 3  # with a title boost, candidates looked at: k times this
RESCORE_POOL = 30  # candidates that get the text signals (links, query words) before the final cut


@dataclass(frozen=True, slots=True)
class RankContext:
    """What every stage may read: the query, the settings, both candidate lists and the vaults."""

    k: int
    text: str  # the query's free text ("" for a filter-only browse)
    phrases: tuple[str, ...]
    languages: tuple[str, ...]  # `lang:` filters (the vector list cannot apply them)
    mode: SearchMode
    settings: SearchSettings
    profile: Profile
    sides: Sequence[VaultSearchSide]
    keyword_hits: Sequence[KeywordHit]
    vector_hits: Sequence[tuple[str, float]]
    stems: frozenset[str]  # the query's words as indexed (what snippets mark)
    today: dt.date
    grouped: bool = False  # matches first, then a few related notes (core.search.result_groups)

    @property
    def browsing(self) -> bool:
        """A filter-only browse: no words, newest first, nothing to re-score."""
        return not self.text.strip()

    @property
    def stemmer(self) -> Stemmer:
        return self.sides[0].keyword.stemmer if self.sides else Stemmer()


@dataclass(frozen=True, slots=True)
class RankState:
    """What one stage hands the next: the fused rows until assembled, then the hits."""

    fused: list[Fused]
    hits: list[Hit] = field(default_factory=list)


Stage = Callable[[RankContext, RankState], RankState]


def shortlist_stage(ctx: RankContext, state: RankState) -> RankState:
    """Keep what can be shown or re-scored, so a vector-only candidate's stored text is fetched only then.

    A title boost may lift a hit from a little below k, so it looks a little further.
    With a freshness profile every candidate stays (freshness can lift any of them).
    """
    if ctx.profile.freshness_weight:
        return state
    boosting = bool(ctx.settings.title_boost and ctx.settings.title_boost > 0)
    depth = max(ctx.k * (TITLE_BOOST_DEPTH if boosting else 1), RESCORE_POOL)
    return replace(state, fused=shortlist(state.fused, depth, ctx.settings.per_note_cap))


def assemble_stage(ctx: RankContext, state: RankState) -> RankState:
    """Hits from the shortlisted ids: stored fields, both ranks, the profile's freshness term."""
    stored = stored_chunks(ctx.sides, ctx.keyword_hits, [f.chunk_id for f in state.fused])
    kw_rank = {h.chunk_id: RankedScore(i, h.score) for i, h in enumerate(ctx.keyword_hits, 1)}
    vec_rank = {cid: RankedScore(i, score) for i, (cid, score) in enumerate(ctx.vector_hits, 1)}
    hits = assemble(
        state.fused, stored, kw_rank, vec_rank, ctx.profile, ctx.today, keep_order=ctx.browsing, languages=ctx.languages
    )
    return replace(state, hits=hits)


def title_boost_stage(ctx: RankContext, state: RankState) -> RankState:
    """Notes whose title or alias the query names rise (core.search.title_boost)."""
    weight = ctx.settings.title_boost
    if not weight or weight <= 0 or ctx.browsing:
        return state
    graphs = {s.name: s.links for s in ctx.sides if s.links is not None}
    return replace(state, hits=title_boosts(state.hits, ctx.text, graphs, weight))


def language_stage(ctx: RankContext, state: RankState) -> RankState:
    """Chunks in the query's language rise a little (core.search.language_preference)."""
    if ctx.browsing:
        return state
    return replace(state, hits=prefer_query_language(state.hits, ctx.text))


def rescore_stage(ctx: RankContext, state: RankState) -> RankState:
    """Link-heavy chunks fall, chunks holding every query word rise (core.search.rescore)."""
    if ctx.browsing:
        return state
    return replace(state, hits=rescore(state.hits, ctx.stems, ctx.stemmer))


def phrase_lift_stage(ctx: RankContext, state: RankState) -> RankState:
    """Hybrid: chunks holding the quoted phrases word for word come first (core.search.phrase_rank)."""
    if ctx.mode != SearchMode.HYBRID:
        return state
    return replace(state, hits=lift_phrase_hits(state.hits, ctx.phrases))


def cap_stage(ctx: RankContext, state: RankState) -> RankState:
    """One row per note (its other passages folded into `more`)."""
    return replace(state, hits=cap_per_note(state.hits, ctx.settings.per_note_cap))


def passage_stage(ctx: RankContext, state: RankState) -> RankState:
    """Each row shows its note's section that answers the query (core.search.passages)."""
    if ctx.browsing:
        return state
    return replace(state, hits=choose_passages(state.hits, ctx.stems, ctx.stemmer))


def group_stage(ctx: RankContext, state: RankState) -> RankState:
    """The first k rows, each labelled a match or a related note; grouped: matches first (core.search.result_groups)."""
    compare = not ctx.browsing and ctx.mode != SearchMode.SEMANTIC
    if ctx.grouped:
        return replace(state, hits=list(group_results(state.hits, ctx.stems, ctx.stemmer, k=ctx.k, compare=compare).hits))
    return replace(state, hits=label_kinds(state.hits[: ctx.k], ctx.stems, ctx.stemmer, compare=compare))


def guard_stage(ctx: RankContext, state: RankState) -> RankState:
    """Snippets with secrets masked; injection-like chunks flagged and ranked down (grouped: matches stay first)."""
    hits = guard(state.hits, ctx.stems, ctx.stemmer, resort=not ctx.browsing, phrases=ctx.phrases)
    if ctx.grouped:
        hits.sort(key=lambda h: h.kind != HitKind.MATCH)  # stable: matches stay above related notes
    return replace(state, hits=hits)


STAGES: tuple[tuple[str, Stage], ...] = (
    ("shortlist", shortlist_stage),
    ("assemble", assemble_stage),
    ("title boost", title_boost_stage),
    ("language", language_stage),
    ("re-score", rescore_stage),
    ("phrase lift", phrase_lift_stage),
    ("cap", cap_stage),
    ("passage", passage_stage),
    ("group", group_stage),
    ("guard", guard_stage),
)


def rank(ctx: RankContext, fused: list[Fused], stages: Sequence[tuple[str, Stage]] = STAGES) -> list[Hit]:
    """The fused list through every stage, in order: the hits to show."""
    state = RankState(fused)
    for _name, stage in stages:
        state = stage(ctx, state)
    return state.hits


def stored_chunks(sides: Sequence[VaultSearchSide], keyword_hits: Sequence[KeywordHit], wanted_ids: list[str]) -> dict[str, StoredChunk]:
    """Stored fields for `wanted_ids`: the keyword hits carry theirs, the rest are looked up per vault."""
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


def assemble(
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
    """One `Hit` per fused id whose chunk is still stored (and in a wanted language), best first."""
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
        hits.append(_hit(f.chunk_id, chunk, tuple(terms), kw_rank, vec_rank))
    if not keep_order:  # a filter-only browse keeps its newest-first order
        hits.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return hits


def _hit(
    chunk_id: str, chunk: StoredChunk, terms: tuple[Term, ...], kw_rank: dict[str, RankedScore], vec_rank: dict[str, RankedScore]
) -> Hit:
    return Hit(
        chunk=ChunkRef(chunk.vault, chunk.rel_path, chunk.ordinal, chunk.heading_path),
        score=sum(t.value for t in terms),
        title=chunk.title,
        snippet="",
        start_byte=chunk.start_byte,
        end_byte=chunk.end_byte,
        bm25=kw_rank.get(chunk_id),
        vector=vec_rank.get(chunk_id),
        contributions=terms,
        tags=chunk.tags,
        date=chunk.date,
        doc_type=chunk.doc_type,
        text=chunk.body,
        confidentiality=chunk.confidentiality,
        page=chunk.page,
        lang=chunk.lang,
    )
