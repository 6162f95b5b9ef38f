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
    name: str  # "keyword" or "vector"
    weight: float
    ids: Sequence[str]  # best first


@dataclass(frozen=True, slots=True)
class Fused:
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
