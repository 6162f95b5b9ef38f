"""Fusing the keyword and vector lists (reciprocal rank or normalised scores) into named, additive terms.

Every number that makes up a fused score is kept as a `Term`, so the
score-breakdown panel can show exactly why a hit ranked where it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.base.models import Term, id_order

DEFAULT_K = 60


@dataclass(frozen=True, slots=True)
class RankedList:
    """One retrieval list to fuse: its name, its weight and its ids, best first."""

    name: str  # "keyword" or "vector"
    weight: float
    ids: Sequence[str]  # best first


@dataclass(frozen=True, slots=True)
class Fused:
    """One chunk after fusion: its score and the named terms that make it up."""

    chunk_id: str
    score: float
    terms: tuple[Term, ...]


def rrf_term(rank: int, k: int, weight: float) -> float:
    """One list's contribution for an item at 1-based `rank`."""
    return weight / (k + rank)


def fuse_rrf(lists: Sequence[RankedList], k: int = DEFAULT_K) -> list[Fused]:
    """Fuse ranked lists; ties broken by id so the order is deterministic."""
    if k < 0:
        raise ValueError("RRF k must be >= 0")
    terms: dict[str, list[Term]] = {}
    for lst in lists:
        seen: set[str] = set()
        for rank, cid in enumerate(lst.ids, start=1):
            if cid in seen:
                continue
            seen.add(cid)
            value = rrf_term(rank, k, lst.weight)
            terms.setdefault(cid, []).append(Term(f"rrf_{lst.name} (w={lst.weight:g}, rank {rank})", value))
    fused = [Fused(cid, sum(t.value for t in ts), tuple(ts)) for cid, ts in terms.items()]
    fused.sort(key=lambda f: (-f.score, *id_order(f.chunk_id)))
    return fused


@dataclass(frozen=True, slots=True)
class ScoredList:
    """One retriever's candidates with their raw scores, best first."""

    name: str  # "keyword" or "vector"
    weight: float  # this list's share of the fused score
    items: Sequence[tuple[str, float]]
    floor_at_min: bool = True  # min-max normalise (cosines); False: divide by the best (BM25 starts at 0)


def normalise(items: Sequence[tuple[str, float]], *, floor_at_min: bool) -> dict[str, float]:
    """Scores mapped to [0, 1]: the best is 1; the floor is the list's worst (or 0)."""
    if not items:
        return {}
    best = max(score for _, score in items)
    low = min(score for _, score in items) if floor_at_min else min(0.0, *(s for _, s in items))
    span = best - low
    out: dict[str, float] = {}
    for cid, score in items:
        if cid not in out:
            out[cid] = (score - low) / span if span > 0 else 1.0
    return out


def fuse_convex(lists: Sequence[ScoredList]) -> list[Fused]:
    """A weighted sum of each list's normalised scores (a convex combination when weights add to 1).

    Unlike RRF, a hit found by only one list keeps what that list thought of it:
    the best keyword match scores its full keyword share even when the vector
    side missed it, instead of 1/61 that ranks it under notes both lists found
    only half-heartedly. Ties are broken by id so the order is deterministic.
    """
    terms: dict[str, list[Term]] = {}
    for lst in lists:
        for cid, value in normalise(lst.items, floor_at_min=lst.floor_at_min).items():
            terms.setdefault(cid, []).append(Term(f"{lst.name} {value:.2f} × weight {lst.weight:g}", lst.weight * value))
    fused = [Fused(cid, sum(t.value for t in ts), tuple(ts)) for cid, ts in terms.items()]
    fused.sort(key=lambda f: (-f.score, *id_order(f.chunk_id)))
    return fused


MEANING_FOUND_WITHIN = 3  # a note the vector list ranks this high ...
MEANING_KEPT_WITHIN = 10  # ... stays within this many notes of the fused list
KEEP_MARGIN = 1e-6  # how far above the note it displaces a kept note is put


def keep_meaning_hits(
    fused: list[Fused], vector_ids: Sequence[str], found_within: int = MEANING_FOUND_WITHIN, kept_within: int = MEANING_KEPT_WITHIN
) -> list[Fused]:
    """Fusion never buries what meaning found: a note in the vector list's first `found_within` notes
    stays in the fused list's first `kept_within` notes.

    When the keyword side's wrong hits outvote such a note, its best chunk is put
    just above the note that would otherwise be the last one shown in the first
    `kept_within`, with a named term saying so (several such notes keep the vector
    side's order). Returns the list best first (a new list; `fused` is not changed).
    """
    order = sorted(fused, key=lambda f: (-f.score, *id_order(f.chunk_id)))
    protected = list(dict.fromkeys(_note(cid) for cid in vector_ids))[:found_within]
    present = set(_note_order(order))
    protected = [n for n in protected if n in present]
    others = [n for n in _note_order(order) if n not in protected]
    slot = kept_within - len(protected)  # the first note of `others` that must end up below them all
    if slot < 0 or slot >= len(others):
        return order
    best = {n: next(f for f in order if _note(f.chunk_id) == n) for n in protected}
    bar = next(f for f in order if _note(f.chunk_id) == others[slot]).score
    lifted: dict[str, Fused] = {}
    for rank, note in enumerate(protected, 1):
        f = best[note]
        target = bar + KEEP_MARGIN * (len(protected) - rank + 1)
        if f.score <= target - KEEP_MARGIN:  # at or below the bar: it would fall out of the first `kept_within`
            term = Term(f"found by meaning (rank {rank}) → kept in the top {kept_within}", target - f.score)
            lifted[f.chunk_id] = Fused(f.chunk_id, target, f.terms + (term,))
    if not lifted:
        return order
    order = [lifted.get(f.chunk_id, f) for f in order]
    order.sort(key=lambda f: (-f.score, *id_order(f.chunk_id)))
    return order


def _note(chunk_id: str) -> str:
    rel, _, vault = id_order(chunk_id)
    return f"{vault}\x00{rel}"


def _note_order(order: Sequence[Fused]) -> list[str]:
    return list(dict.fromkeys(_note(f.chunk_id) for f in order))
