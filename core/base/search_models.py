"""The dataclasses a search makes and reads: hits and their scores, filters, settings, the response.

Split from `core.base.models` (which still names every one of them: `from core.base.models
import Hit` works as before) so that a process that never searches does not create them at
import (~6 ms: a cold `cairn index`, the parallel build's worker).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from core.base.confidentiality import Confidentiality
from core.base.model_basics import ChunkRef, Fusion, SearchMode
from core.base.structured import PropertyFilter


@dataclass(frozen=True, slots=True)
class RankedScore:
    """A hit's place and raw score in one retrieval list (keyword or vector)."""

    rank: int  # 1-based rank in that candidate list
    score: float  # raw score (BM25 score or cosine)


@dataclass(frozen=True, slots=True)
class Term:
    """A named addend of a hit's final score (an RRF term, a boost, a penalty)."""

    name: str
    value: float


class HitKind(StrEnum):
    """Why a row is in a result list: it holds the query's words, or it is only near in meaning."""

    MATCH = "match"
    RELATED = "related"  # found by meaning only: shown under a "Related notes" divider


@dataclass(frozen=True, slots=True)
class Hit:
    """One result row: the chunk, its fused score and the named terms that add up to it."""

    chunk: ChunkRef
    score: float
    title: str
    snippet: str
    start_byte: int
    end_byte: int
    bm25: RankedScore | None
    vector: RankedScore | None
    contributions: tuple[Term, ...]
    tags: tuple[str, ...] = ()
    date: str | None = None
    doc_type: str | None = None
    text: str = ""
    flags: tuple[str, ...] = ()  # guardrail flags, e.g. "policy_override_attempt"
    confidentiality: str = Confidentiality.INTERNAL
    page: int | None = None  # 1-based PDF page of the chunk
    lang: str = ""  # the chunk's detected language (ISO 639-1), "" when unknown
    more: tuple[Hit, ...] = ()  # further passages of the same note past the per-note cap, best first
    kind: HitKind = HitKind.MATCH  # set by core.search.result_groups after ranking


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """What a search is limited to; every field empty means the whole of every vault."""

    vaults: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()  # path prefixes inside a vault
    tags: tuple[str, ...] = ()
    tag_mode: str = "any"  # any | all
    doc_types: tuple[str, ...] = ()
    after: str | None = None  # inclusive ISO date
    before: str | None = None  # inclusive ISO date
    allow_restricted: bool = False
    languages: tuple[str, ...] = ()  # detected chunk languages (ISO 639-1), `lang:` in the query box
    # Notes whose path starts with one of these: a Dendron-style dotted hierarchy ("dendron.topic.")
    # chosen in the app's tree; a hard filter on both lists, like folders.
    path_prefixes: tuple[str, ...] = ()
    where: tuple[PropertyFilter, ...] = ()  # property filters (`status:draft`, `rating>=4`), all must hold
    paths: frozenset[str] | None = None  # only these notes (a Base's rows); None = no restriction


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query split into its free text, words, quoted phrases and filters (core.search.query)."""

    text: str  # free text left after filters were taken out
    terms: tuple[str, ...]
    phrases: tuple[str, ...]
    filters: SearchFilters


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry of one retrieval list, before fusion (for the debug view)."""

    chunk_id: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """The user's ranking settings (from the config); every search states the ones it used.

    `Engine.search` fills a request's unset fields from the config, so a caller
    (app, CLI, MCP, Ask, eval) cannot forget one.
    """

    profile: str = "default"
    per_note_cap: int = 1  # at most this many rows of one note (the rest fold into Hit.more); 0 = no cap
    top_n: int = 100  # candidates taken from each retrieval list before fusion
    rrf_k: int = 60  # used only when fusion is RRF
    title_boost: float = 0.005  # boost for a note the query names (title/alias), RRF units; 0 = off
    fusion: Fusion = Fusion.BLEND
    keyword_share: float | None = None  # blend: the keyword list's share (0–1); None = the profile's


@dataclass(frozen=True, slots=True)
class QueryCorrection:
    """A query searched with its typos corrected from the vault's own words (core.search.spelling)."""

    original: str  # the query as typed
    corrected: str  # the query searched
    words: tuple[tuple[str, str], ...]  # (typed, used) for each corrected word

    @property
    def message(self) -> str:
        return f"showing results for {self.corrected!r}, search instead for {self.original!r}"


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """A search's answer: the hits, what was searched and how, warnings and timings."""

    query: str
    mode: SearchMode  # the mode actually used (keyword when semantic was unavailable)
    requested_mode: SearchMode
    hits: tuple[Hit, ...]
    warnings: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    parsed: ParsedQuery | None = None
    keyword_candidates: tuple[Candidate, ...] = ()
    vector_candidates: tuple[Candidate, ...] = ()
    profile: str = "default"
    settings: SearchSettings = SearchSettings()  # the ranking settings this search used
    exact_matches: bool = True  # False: no note holds the query's words; the hits are only related
    correction: QueryCorrection | None = None  # the query's typos, corrected from the vault's words

    @property
    def match_count(self) -> int:
        """Rows that hold the query's words (the count a header shows); the rest are related notes."""
        return sum(1 for h in self.hits if h.kind == HitKind.MATCH)
