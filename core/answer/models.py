"""The request and response of "Ask my notes"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.base.models import Hit, SearchMode

DETAIL_K = {"brief": 3, "normal": 5, "detailed": 8}


@dataclass(frozen=True, slots=True)
class AskRequest:
    question: str
    vaults: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    # Notes whose path starts with one of these (a Dendron dotted-name node chosen in the app's
    # tree): a hard filter, as `SearchFilters.path_prefixes` is for search.
    path_prefixes: tuple[str, ...] = ()
    detail: str = "normal"  # brief | normal | detailed
    k: int | None = None  # explicit override of the auto-selected 3..8
    mode: SearchMode | str = SearchMode.HYBRID
    context_budget_tokens: int = 1500
    allow_restricted: bool = False
    debug: bool = False
    history: tuple[Turn, ...] = ()  # earlier turns of the conversation, oldest first


@dataclass(frozen=True, slots=True)
class Source:
    """One numbered block of context: one or more adjacent chunks of a note."""

    number: int
    vault: str
    rel_path: str
    title: str
    heading_path: str
    chunk_ordinals: tuple[int, ...]
    start_byte: int
    end_byte: int
    text: str  # masked, as sent
    hits: tuple[Hit, ...]  # the retrieved chunks behind it, with their score breakdowns
    flags: tuple[str, ...] = ()
    page: int | None = None  # first and last PDF page of its chunks; None for a note
    last_page: int | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    number: int
    vault: str
    rel_path: str
    heading_path: str
    chunk_ordinal: int
    start_byte: int
    end_byte: int
    title: str = ""
    page: int | None = None  # first and last PDF page cited; None for a note
    last_page: int | None = None


@dataclass(frozen=True, slots=True)
class Quote:
    """One verbatim passage an extractive answer quotes, with exactly where it came from.

    `heading_path` and the byte range are those of the chunk the text was cut from, so the
    label shown beside a quote is always the section the text sits in.
    """

    number: int  # the source number it cites
    text: str  # verbatim from the note (for code: the block's lines, fences left out)
    kind: str  # "prose" | "item" | "row" | "code"
    rel_path: str
    heading_path: str
    chunk_ordinal: int
    start_byte: int
    end_byte: int
    language: str = ""  # a code block's info string
    intro: str = ""  # the sentence that introduces a code block
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class Turn:
    """One exchange of a conversation: what was asked, what was searched for, what came back."""

    question: str
    standalone: str  # the question rewritten to stand alone (the same text for a first question)
    answer: str


@dataclass(frozen=True, slots=True)
class AskResponse:
    question: str
    answer: str
    references: tuple[Reference, ...]
    abstained: bool
    abstain_reason: str | None
    context_sent: tuple[dict[str, str], ...]  # the exact messages sent (empty when nothing was sent)
    provider: str
    model: str | None
    sources: tuple[Source, ...] = ()
    warnings: tuple[str, ...] = ()
    incomplete: bool = False  # the stream broke off; `answer` holds what arrived
    error: str | None = None
    first_token_ms: float | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    debug: dict[str, Any] = field(default_factory=dict)
    quotes: tuple[Quote, ...] = ()  # the extractive answer's passages (also when it stands in for a model)
    related: tuple[Reference, ...] = ()  # the closest notes when the answer abstains
    unverified: str = ""  # a model's text that cited nothing it could be checked against
    standalone_question: str = ""  # what was searched for, when a follow-up was rewritten
