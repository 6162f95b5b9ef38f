"""Honest result lists: the notes that hold the query's words first, then a few related ones.

Fusion ranks a vector-only neighbour next to a note that holds the typed word, and a
list cut at k is then padded with notes that merely sit near the query in meaning:
a made-up word found in one note came back as "10 results". After the ranking
pipeline this module splits the ranked rows in two: **matches** (the note's text or
title holds at least one of the query's words, as the index analyses them) in rank
order, then at most `RELATED_LIMIT` **related** notes (found by meaning only), which
front ends show under a divider. Filters were applied to both lists before fusion,
so neither side can hold a note outside them.

A search with nothing to compare (a filter-only browse, a query of stop words only,
semantic mode, which never looks for words) makes no claim: every row is a match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.base.models import Hit, HitKind
from core.index.analysis import Stemmer, fold
from core.search.signals import terms_present

RELATED_LIMIT = 3  # "related notes" shown under the matches: few, so they never pose as results
__all__ = ["RELATED_LIMIT", "HitKind", "ResultGroups", "group_results", "holds_query_words", "label_kinds"]


@dataclass(frozen=True, slots=True)
class ResultGroups:
    """The rows to show, matches first, and how many of them are matches."""

    hits: tuple[Hit, ...]
    matches: int

    @property
    def related(self) -> int:
        return len(self.hits) - self.matches


def holds_query_words(hit: Hit, stems: frozenset[str], stemmer: Stemmer) -> bool:
    """True when the hit's title, text or folded passages hold one of the query's terms.

    CJK terms are bigrams the Latin scan does not produce, so a non-ASCII term also
    counts when it occurs as written (after folding).
    """
    texts = [f"{hit.title}\n{hit.text}", *(m.text for m in hit.more)]
    for text in texts:
        low = fold(text)  # accents folded as the index folds them: "Café" holds "cafe"
        if terms_present(low, stems, stemmer):
            return True
        if any(not s.isascii() and len(s) > 1 and s in low for s in stems):
            return True
    return False


def label_kinds(hits: Sequence[Hit], stems: frozenset[str], stemmer: Stemmer, *, compare: bool = True) -> list[Hit]:
    """The hits in their order, each marked match or related (for callers that keep the ranking)."""
    if not compare or not stems:
        return [replace(h, kind=HitKind.MATCH) for h in hits]
    return [replace(h, kind=HitKind.MATCH if holds_query_words(h, stems, stemmer) else HitKind.RELATED) for h in hits]


def group_results(
    hits: Sequence[Hit],
    stems: frozenset[str],
    stemmer: Stemmer,
    *,
    k: int,
    compare: bool = True,
    related_limit: int = RELATED_LIMIT,
) -> ResultGroups:
    """Up to `k` matches in rank order, then related notes filling the rest, at most `related_limit`.

    `hits` is the ranked list after the per-note cap, longer than k, so matches
    ranked below a related note still make the list. With `compare` False (no words
    to look for) every row is a match and the list is simply cut at k.
    """
    if not compare or not stems:
        rows = tuple(replace(h, kind=HitKind.MATCH) for h in hits[:k])
        return ResultGroups(rows, len(rows))
    matches: list[Hit] = []
    related: list[Hit] = []
    for h in hits:
        if holds_query_words(h, stems, stemmer):
            if len(matches) < k:
                matches.append(replace(h, kind=HitKind.MATCH))
        elif len(related) < related_limit:
            related.append(replace(h, kind=HitKind.RELATED))
    room = max(0, min(related_limit, k - len(matches)))
    return ResultGroups(tuple(matches) + tuple(related[:room]), len(matches))
