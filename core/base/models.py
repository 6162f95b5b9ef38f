"""Small frozen dataclasses shared by every part of the engine.

They are the contracts the CLI, the desktop app and the tests rely on, so they
hold data only; the logic that produces them lives in the modules named after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from core.base.confidentiality import Confidentiality
from core.base.model_basics import ChunkRef as ChunkRef
from core.base.model_basics import Fusion as Fusion
from core.base.model_basics import SearchMode as SearchMode
from core.base.model_basics import chunk_id as chunk_id
from core.base.model_basics import id_order as id_order
from core.base.model_basics import split_chunk_id as split_chunk_id

if TYPE_CHECKING:
    from core.base.search_models import Candidate as Candidate
    from core.base.search_models import Hit as Hit
    from core.base.search_models import HitKind as HitKind
    from core.base.search_models import ParsedQuery as ParsedQuery
    from core.base.search_models import QueryCorrection as QueryCorrection
    from core.base.search_models import RankedScore as RankedScore
    from core.base.search_models import SearchFilters as SearchFilters
    from core.base.search_models import SearchResponse as SearchResponse
    from core.base.search_models import SearchSettings as SearchSettings
    from core.base.search_models import Term as Term
    from core.base.structured import Property, Task


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


# What a search makes and reads (hits, filters, settings, the response) is defined in
# `core.base.search_models` and imported from here on first use: creating its ten dataclasses
# was ~6 ms of every process that imports this module, a cold `cairn index` and the parallel
# build's worker among them, which use none of them (issue #30).
_SEARCH_NAMES = frozenset(
    "Candidate Hit HitKind ParsedQuery QueryCorrection RankedScore SearchFilters SearchResponse SearchSettings Term".split()
)


def __getattr__(name: str) -> Any:
    if name in _SEARCH_NAMES:
        from core.base import search_models

        return getattr(search_models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
