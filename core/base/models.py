"""Small frozen dataclasses shared by every part of the engine.

They are the contracts the CLI, the desktop app and the tests rely on, so they
hold data only; the logic that produces them lives in the modules named after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class SkipReason(str, Enum):
    """Why a file in a vault was not indexed (shown in `cairn status` and the app)."""

    TOO_LARGE = "too_large"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    SYMLINK_ESCAPE = "symlink_escape"
    SYMLINK_LOOP = "symlink_loop"


@dataclass(frozen=True, slots=True)
class Vault:
    """A named folder of notes. The root is read-only to Cairn."""

    name: str
    root: str


@dataclass(frozen=True, slots=True)
class SkippedFile:
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
    title: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    date: str | None = None  # ISO date "YYYY-MM-DD" when parseable
    project: str | None = None
    doc_type: str | None = None
    confidentiality: str = "internal"
    end_byte: int = 0  # where the body starts in the raw bytes
    error: str | None = None  # YAML problem, if any


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a note: the unit that is indexed, embedded, retrieved and cited."""

    ordinal: int
    heading_path: str
    start_byte: int
    end_byte: int
    text: str


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

    @property
    def folder(self) -> str:
        head, _, _ = self.rel_path.rpartition("/")
        return head


@dataclass(frozen=True, slots=True)
class ChunkRef:
    vault: str
    rel_path: str
    ordinal: int
    heading_path: str

    @property
    def chunk_id(self) -> str:
        return chunk_id(self.vault, self.rel_path, self.ordinal)


def chunk_id(vault: str, rel_path: str, ordinal: int) -> str:
    """Stable textual id of a chunk: unique across vaults."""
    return f"{vault}\x1f{rel_path}\x1f{ordinal}"


def id_order(cid: str) -> tuple[str, int, str]:
    """Sort key for ties: note path, then chunk number (2 before 10), then vault."""
    parts = cid.split("\x1f")
    if len(parts) != 3 or not parts[2].isdigit():
        return cid, 0, ""
    return parts[1], int(parts[2]), parts[0]


@dataclass(frozen=True, slots=True)
class RankedScore:
    rank: int  # 1-based rank in that candidate list
    score: float  # raw score (BM25 score or cosine)


@dataclass(frozen=True, slots=True)
class Term:
    """A named addend of a hit's final score (an RRF term, a boost, a penalty)."""

    name: str
    value: float


@dataclass(frozen=True, slots=True)
class Hit:
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
    confidentiality: str = "internal"
    more: tuple[Hit, ...] = ()  # further passages of the same note past the per-note cap, best first


@dataclass(frozen=True, slots=True)
class SearchFilters:
    vaults: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()  # path prefixes inside a vault
    tags: tuple[str, ...] = ()
    tag_mode: str = "any"  # any | all
    doc_types: tuple[str, ...] = ()
    after: str | None = None  # inclusive ISO date
    before: str | None = None  # inclusive ISO date
    allow_restricted: bool = False


@dataclass(frozen=True, slots=True)
class ParsedQuery:
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
class SearchResponse:
    query: str
    mode: str  # the mode actually used
    requested_mode: str
    hits: tuple[Hit, ...]
    warnings: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    parsed: ParsedQuery | None = None
    keyword_candidates: tuple[Candidate, ...] = ()
    vector_candidates: tuple[Candidate, ...] = ()
    profile: str = "default"
    exact_matches: bool = True  # False: no note holds the query's words; the hits are only related
