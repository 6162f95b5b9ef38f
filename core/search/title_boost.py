"""A small, named boost for a note the query names: its title, file name or a front-matter alias.

A question that names a note ("what does Priya's onboarding say") means that note; the
lists alone often rank a note that only mentions it higher. A boost for notes the other
top hits link to was tried and left out: it lifted neighbours over the answer. The
measurements are in docs/ranking.md.

The weight is in RRF score units (rank 1 of one list is 1/61 ≈ 0.016): it moves a hit a few
places, never past a clearly better one. Each boost is a `Term` in the hit's breakdown, so
the Why tab names it; a weight of 0 turns it off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from core.base.models import Hit, Term
from core.index.link_graph import LinkGraph
from core.vault.links import key

DEFAULT_WEIGHT = 0.005
EXACT = "title boost: the query is this note's title or alias"
CONTAINS = "title boost: this note's title or alias contains the query"
_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(key(text)))


def title_boosts(hits: Sequence[Hit], query: str, graphs: Mapping[str, LinkGraph], weight: float) -> list[Hit]:
    """`hits` with a title/alias term where the query names the note (full weight if exactly,
    half if every query word is in the name), sorted again."""
    wanted, wanted_words = key(query), _words(query)
    if weight <= 0 or not hits or not wanted_words:
        return list(hits)
    out: list[Hit] = []
    for h in hits:
        graph = graphs.get(h.chunk.vault)
        # `is not None`, not truthiness: `len(graph)` parses every note's links (~20 ms at 10k notes).
        names = [h.title, PurePosixPath(h.chunk.rel_path).stem, *(graph.aliases(h.chunk.rel_path) if graph is not None else ())]
        term: Term | None = None
        if any(key(n) == wanted for n in names):
            term = Term(EXACT, weight)
        elif any(wanted_words <= _words(n) for n in names):
            term = Term(CONTAINS, weight / 2)
        if term is not None:
            h = replace(h, score=h.score + term.value, contributions=h.contributions + (term,))
        out.append(h)
    out.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return out
