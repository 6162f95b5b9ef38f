"""Reciprocal rank fusion with named, additive terms.

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
