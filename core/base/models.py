"""Small frozen dataclasses shared by every part of the engine.

They are the contracts the CLI, the desktop app and the tests rely on, so they
hold data only; the logic that produces them lives in the modules named after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from core.base.confidentiality import Confidentiality
from core.base.structured import Property, PropertyFilter, Task


class SearchMode(StrEnum):
    """How a search retrieves: a StrEnum, so `mode == "hybrid"` and JSON output keep working."""

    HYBRID = "hybrid"
    KEYWORD = "keyword"
    SEMANTIC = "semantic"


class Fusion(StrEnum):
    """How hybrid search merges its keyword and meaning lists (the user's choice in Settings)."""

    BLEND = "blend"  # a weighted sum of each list's normalised scores (the default)
    RRF = "rrf"  # reciprocal rank fusion: weight ÷ (k + rank), scores ignored

    @classmethod
    def parse(cls, value: str) -> Fusion:
        """A fusion by name; "convex" (the blend's older name) is accepted."""
        name = str(value).strip().lower()
        try:
            return cls.BLEND if name == "convex" else cls(name)
        except ValueError:
            raise ValueError(f"unknown fusion {value!r}; choose blend or rrf") from None


class SkipReason(StrEnum):
    """Why a file in a vault was not indexed (shown in `cairn status` and the app)."""

    TOO_LARGE = "too_large"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    SYMLINK_ESCAPE = "symlink_escape"
    SYMLINK_LOOP = "symlink_loop"
    NOT_A_FILE = "not_a_file"  # a FIFO, socket or device with a note's name
    BAD_NAME = "bad_name"  # a file name that is not valid UTF-8
    DUPLICATE_NAME = "duplicate_name"  # same name as another file once Unicode-normalised (NFC/NFD)
    PARSE_ERROR = "parse_error"  # reading or parsing the note failed in an unforeseen way
    # Attachments (PDFs): why the text could not be taken out.
    ENCRYPTED = "encrypted"
    NO_TEXT = "no_text"
    MALFORMED = "malformed"
    PARSER_FAILED = "parser_failed"  # the parser crashed or ran over its time limit


@dataclass(frozen=True, slots=True)
class Vault:
    """A named folder of notes. The root is read-only to Cairn."""

    name: str
    root: str


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file of the vault that was not indexed, and why (`cairn status`, Index health)."""

    rel_path: str
    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class FileWarning:
    """A note that was indexed, but with something the user should know (bad YAML, bad UTF-8)."""

    rel_path: str
    code: str
    detail: str


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """What a note's front matter says, read once by `core.vault.frontmatter`."""

    title: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    date: str | None = None  # ISO date "YYYY-MM-DD" when parseable
    project: str | None = None
    doc_type: str | None = None
    confidentiality: str = Confidentiality.INTERNAL
    end_byte: int = 0  # where the body starts in the raw bytes
    error: str | None = None  # YAML problem, if any
    properties: tuple[Property, ...] = ()  # every property, typed (`core.vault.properties`)
    links: tuple[Link, ...] = ()  # `[[links]]` written inside properties


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a note: the unit that is indexed, embedded, retrieved and cited."""

    ordinal: int
    heading_path: str
    start_byte: int
    end_byte: int
    text: str
    page: int | None = None  # 1-based page of a PDF; None for notes. Offsets then index the extracted text


class LinkKind(StrEnum):
    """How a note refers to another: `[[wiki]]`, `![[embed]]` or `[markdown](link.md)`."""

    WIKI = "wiki"
    EMBED = "embed"
    MARKDOWN = "markdown"


@dataclass(frozen=True, slots=True)
class Link:
    """One outgoing link as written in a note, before it is resolved against the vault."""

    kind: LinkKind
    target: str  # note name or path as written (URL-decoded), without the anchor
    anchor: str = ""  # "Heading", "^block-id" or ""
    label: str = ""  # what the reader sees: `[[a|b]]` -> "b"
    line: int = 0  # 1-based line of the raw file
    context: str = ""  # the linking line, trimmed, for backlink panels


@dataclass(frozen=True, slots=True)
class Document:
    """One parsed note ready for indexing."""

    vault: str
    rel_path: str  # POSIX separators, Unicode NFC
    document_version: str  # sha256 of the raw bytes
    size: int
    mtime_ns: int
    title: str
    tags: tuple[str, ...]
    date: str | None
    doc_type: str | None
    project: str | None
    confidentiality: str
    aliases: tuple[str, ...]
    chunks: tuple[Chunk, ...]
    warnings: tuple[FileWarning, ...] = ()
    links: tuple[Link, ...] = ()
    properties: tuple[Property, ...] = ()
    tasks: tuple[Task, ...] = ()

    @property
    def folder(self) -> str:
        head, _, _ = self.rel_path.rpartition("/")
        return head


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Where a hit's chunk is: vault, note, its place in the note and its heading trail."""

    vault: str
    rel_path: str
    ordinal: int
    heading_path: str

    @property
    def chunk_id(self) -> str:
        return chunk_id(self.vault, self.rel_path, self.ordinal)


_ID_SEP = "\x1f"  # the ASCII unit separator: never in a vault name or a file path


def chunk_id(vault: str, rel_path: str, ordinal: int) -> str:
    """Stable textual id of a chunk: unique across vaults. `split_chunk_id` is its inverse."""
    return f"{vault}{_ID_SEP}{rel_path}{_ID_SEP}{ordinal}"


def split_chunk_id(cid: str) -> tuple[str, str, int]:
    """(vault, rel_path, ordinal) of a chunk id; ValueError if `cid` is not one."""
    parts = cid.split(_ID_SEP)
    if len(parts) != 3 or not parts[2].isdigit():
        raise ValueError(f"not a chunk id: {cid!r}")
    return parts[0], parts[1], int(parts[2])


def id_order(cid: str) -> tuple[str, int, str]:
    """Sort key for ties: note path, then chunk number (2 before 10), then vault."""
    try:
        vault, rel_path, ordinal = split_chunk_id(cid)
    except ValueError:
        return cid, 0, ""
    return rel_path, ordinal, vault


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


def cited_path(rel_path: str, page: int | None, last_page: int | None = None) -> str:
    """How a hit or citation names where it is: `notes/a.md`, `manuals/r.pdf, p. 12` or `…, pp. 12–13`.

    Only a PDF's unit is a page a viewer opens by number; an e-book's chapter, a mailbox's
    message or an export's conversation is named by its heading path instead.
    """
    if page is None or not rel_path.lower().endswith(".pdf"):
        return rel_path
    if last_page is not None and last_page != page:
        return f"{rel_path}, pp. {page}\u2013{last_page}"
    return f"{rel_path}, p. {page}"


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
