"""Ranking metrics over lists of ids, in the BEIR / trec_eval formulation.

Conventions shared by every function here:

* ``ranked`` is best-first. Duplicate ids are collapsed to their first
  occurrence *before* the cut at ``k``: when several chunks of one note are
  mapped to the note's path, the repeats neither score again nor push other
  notes out of the top ``k``.
* A case with no relevant ids has no defined recall, precision, MRR or nDCG.
  The functions return ``None`` for it, and :func:`mean` skips ``None``, so such
  cases (e.g. "should find nothing" queries) do not drag averages towards 0.
* ``k`` must be a positive integer; anything else is a caller bug and raises.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence


def _check_k(k: int) -> None:
    # bool is an int subclass; `k=True` is always a mistake.
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def top_k_unique(ranked: Sequence[str], k: int) -> list[str]:
    """First ``k`` distinct ids of ``ranked``, in order.

    Args:
        ranked: Ids, best first; may contain repeats.
        k: Cut-off (positive).

    Returns:
        At most ``k`` ids, each the first occurrence of its value.
    """
    _check_k(k)
    seen: set[str] = set()
    out: list[str] = []
    for item in ranked:
        if item in seen:
            continue
        seen.add(item)
        out.append(item)
        if len(out) == k:
            break
    return out


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float | None:
    """Fraction of the relevant ids found in the top ``k``.

    Args:
        ranked: Retrieved ids, best first.
        relevant: Ids that count as correct.
        k: Cut-off.

    Returns:
        A value in [0, 1], or ``None`` when ``relevant`` is empty.
    """
    _check_k(k)
    wanted = set(relevant)
    if not wanted:
        return None
    hits = sum(1 for item in top_k_unique(ranked, k) if item in wanted)
    return hits / len(wanted)


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float | None:
    """Fraction of the top ``k`` slots holding a relevant id.

    The denominator is always ``k`` (trec_eval's ``P_k``), so a short result
    list is penalised for the slots it left empty.

    Args:
        ranked: Retrieved ids, best first.
        relevant: Ids that count as correct.
        k: Cut-off.

    Returns:
        A value in [0, 1], or ``None`` when ``relevant`` is empty.
    """
    _check_k(k)
    wanted = set(relevant)
    if not wanted:
        return None
    hits = sum(1 for item in top_k_unique(ranked, k) if item in wanted)
    return hits / k


def mrr_at_k(ranked: Sequence[str], relevant: Collection[str], k: int = 10) -> float | None:
    """Reciprocal rank of the first relevant id within the top ``k`` (0 if none).

    Args:
        ranked: Retrieved ids, best first.
        relevant: Ids that count as correct.
        k: Cut-off.

    Returns:
        ``1 / rank`` of the first hit, 0.0 without a hit, ``None`` when
        ``relevant`` is empty.
    """
    _check_k(k)
    wanted = set(relevant)
    if not wanted:
        return None
    for rank, item in enumerate(top_k_unique(ranked, k), start=1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def dcg(gains: Iterable[float]) -> float:
    """Discounted cumulative gain of gains listed in rank order (rank 1 first).

    Uses the ``log2(rank + 1)`` discount, so rank 1 is undiscounted.
    """
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def ndcg_at_k(ranked: Sequence[str], graded: Mapping[str, int], k: int = 10) -> float | None:
    """Normalised DCG at ``k`` with linear gains, as pytrec_eval's ``ndcg_cut``.

    Gain of a retrieved id is its grade (grades <= 0 and unjudged ids give 0).
    The ideal DCG takes the ``k`` highest grades, sorted descending, so a
    ranking is only perfect if it orders the graded ids by grade.

    Args:
        ranked: Retrieved ids, best first.
        graded: Relevance grade per id (e.g. 2 = must include, 1 = acceptable).
        k: Cut-off.

    Returns:
        A value in [0, 1], or ``None`` when no id has a positive grade.
    """
    _check_k(k)
    positive = sorted((g for g in graded.values() if g > 0), reverse=True)
    if not positive:
        return None
    ideal = dcg(positive[:k])
    actual = dcg(max(graded.get(item, 0), 0) for item in top_k_unique(ranked, k))
    return actual / ideal


def ranking_metrics(
    ranked: Sequence[str], graded: Mapping[str, int], k: int = 10
) -> dict[str, float | None]:
    """All four metrics at one cut-off, keyed like ``"ndcg@10"``.

    Ids with a positive grade count as relevant for the binary metrics, so one
    grade map drives every number in a report row.

    Args:
        ranked: Retrieved ids, best first.
        graded: Relevance grade per id.
        k: Cut-off.

    Returns:
        ``{"recall@k", "precision@k", "mrr@k", "ndcg@k"}`` → value or ``None``.
    """
    relevant = {item for item, grade in graded.items() if grade > 0}
    return {
        f"recall@{k}": recall_at_k(ranked, relevant, k),
        f"precision@{k}": precision_at_k(ranked, relevant, k),
        f"mrr@{k}": mrr_at_k(ranked, relevant, k),
        f"ndcg@{k}": ndcg_at_k(ranked, graded, k),
    }


def mean(values: Iterable[float | None]) -> float | None:
    """Arithmetic mean ignoring ``None`` (cases where the metric is undefined).

    Returns:
        The mean, or ``None`` if every value was ``None`` (or there were none),
        so a report can show "n/a" instead of a misleading 0.
    """
    total = 0.0
    count = 0
    for value in values:
        if value is None:
            continue
        total += value
        count += 1
    return total / count if count else None
