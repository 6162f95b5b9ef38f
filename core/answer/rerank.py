"""Opt-in re-ranking of a search's top 10 by the user's language model.

No cross-encoder ships offline, but a user who configured a
language model for Ask can let it judge the top passages. It runs after the
fused results are shown and never blocks them: the caller shows the fused
order at once and swaps in this order when it arrives. On any failure, a time
limit or a cancel, the fused order stays and the result says why.

Restricted notes are never sent to a remote model (the rule the answer
pipeline enforces, `unsafe_for`): such a hit keeps its fused place and the
others are reordered around it.

Each re-ranked hit gets a named term ("LLM rerank: 3 → 1, 840 ms") that moves
its score onto the score of its new place, so the terms still add up to the
score and the scores still sort the list.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from core.answer.pipeline import unsafe_for
from core.base.models import Hit, Term
from core.providers.llm.base import ChatMessage, ChatProvider, LLMError

RERANK_TOP = 10  # how many of the fused hits the model sees
RERANK_TIMEOUT_S = 30.0  # a slow model must not leave the list waiting for ever
PASSAGE_CHARS = 700  # of each passage sent: enough to judge, small enough for a 2k-token context
MAX_TOKENS = 60  # "3, 1, 2, ..." for ten passages

SYSTEM = (
    "You rank search results. Given a search query and numbered passages from the user's notes, "
    "reply with the passage numbers ordered from most to least relevant to the query, separated by "
    "commas, and nothing else."
)
_NUMBER = re.compile(r"\d+")


class RerankStatus(StrEnum):
    RERANKED = "reranked"
    FAILED = "failed"  # the model failed or answered with no ranking: the fused order stays
    CANCELLED = "cancelled"  # a newer query (or the user) cancelled it
    TIMED_OUT = "timed_out"
    SKIPPED = "skipped"  # nothing to rerank (fewer than two passages that may be sent)


@dataclass(frozen=True, slots=True)
class RerankResult:
    """The hits in their new order (or unchanged), and what happened, for the status line."""

    hits: tuple[Hit, ...]
    status: RerankStatus
    message: str
    ms: float


def rerank(
    query: str,
    hits: Sequence[Hit],
    provider: ChatProvider,
    *,
    cancel: threading.Event | None = None,
    timeout_s: float = RERANK_TIMEOUT_S,
    top: int = RERANK_TOP,
) -> RerankResult:
    """Reorder the first `top` hits by the model's judgement; the rest keep their place.

    `cancel` (checked between the pieces of the reply) stops it; so does `timeout_s`,
    which sets `cancel` (a fresh event when none is given).
    """
    t0 = time.perf_counter()
    head, tail = list(hits[:top]), list(hits[top:])
    movable = [i for i, h in enumerate(head) if not unsafe_for(h, provider)]
    if len(movable) < 2:
        return RerankResult(tuple(hits), RerankStatus.SKIPPED, "LLM rerank: nothing to reorder", _ms(t0))
    stop = cancel if cancel is not None else threading.Event()
    timed_out = threading.Event()

    def expire() -> None:
        timed_out.set()
        stop.set()

    timer = threading.Timer(timeout_s, expire)
    timer.daemon = True
    timer.start()
    try:
        reply = "".join(provider.stream(_messages(query, [head[i] for i in movable]), temperature=0.0, max_tokens=MAX_TOKENS, cancel=stop))
    except LLMError as exc:
        ms = _ms(t0)
        if timed_out.is_set():
            return RerankResult(tuple(hits), RerankStatus.TIMED_OUT, f"LLM rerank took over {timeout_s:g} s; showing the fused order", ms)
        if exc.code == "cancelled":
            return RerankResult(tuple(hits), RerankStatus.CANCELLED, "LLM rerank cancelled", ms)
        return RerankResult(tuple(hits), RerankStatus.FAILED, f"LLM rerank failed ({exc.message}); showing the fused order", ms)
    finally:
        timer.cancel()
    order = parse_ranking(reply, len(movable))
    ms = _ms(t0)
    if order is None:
        return RerankResult(tuple(hits), RerankStatus.FAILED, "LLM rerank: the model's reply held no ranking; showing the fused order", ms)
    return RerankResult(tuple(_apply(head, movable, order, ms)) + tuple(tail), RerankStatus.RERANKED, f"LLM rerank done in {ms:.0f} ms", ms)


def parse_ranking(reply: str, n: int) -> list[int] | None:
    """0-based passage indexes, best first, from a reply like "3, 1, 2"; None without any.

    Numbers out of range and repeats are ignored; passages the model left out
    follow in their fused order.
    """
    seen: list[int] = []
    for m in _NUMBER.finditer(reply):
        i = int(m.group()) - 1
        if 0 <= i < n and i not in seen:
            seen.append(i)
    if not seen:
        return None
    return seen + [i for i in range(n) if i not in seen]


def _messages(query: str, hits: Sequence[Hit]) -> list[ChatMessage]:
    parts = [f"Search query: {query}", ""]
    for n, h in enumerate(hits, 1):
        where = f"{h.title} › {h.chunk.heading_path}" if h.chunk.heading_path and h.chunk.heading_path != h.title else h.title
        text = " ".join(h.text.split())
        if len(text) > PASSAGE_CHARS:
            text = text[:PASSAGE_CHARS] + "…"
        parts += [f"[{n}] {where}", text, ""]
    parts.append(f"Rank the {len(hits)} passages, most relevant first (numbers only, comma-separated):")
    return [ChatMessage("system", SYSTEM), ChatMessage("user", "\n".join(parts))]


def _apply(head: list[Hit], movable: list[int], order: list[int], ms: float) -> list[Hit]:
    """Put the movable hits into their slots in the model's order, each taking its slot's score."""
    out = list(head)
    for slot, pick in zip(movable, order):
        h = head[movable[pick]]
        term = Term(f"LLM rerank: {movable[pick] + 1} → {slot + 1}, {ms:.0f} ms", head[slot].score - h.score)
        out[slot] = replace(h, score=h.score + term.value, contributions=h.contributions + (term,))
    return out


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)
