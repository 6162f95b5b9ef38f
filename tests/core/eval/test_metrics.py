"""Ranking metrics checked against values worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.eval.metrics import (
    dcg,
    mean,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    ranking_metrics,
    recall_at_k,
    top_k_unique,
)


def test_recall_counts_relevant_ids_found_in_top_k() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 3) == pytest.approx(2 / 4)
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 5) == pytest.approx(3 / 4)


def test_precision_divides_by_k_even_when_fewer_results() -> None:
    assert precision_at_k(["a", "x"], {"a"}, 5) == pytest.approx(1 / 5)
    assert precision_at_k(["a", "x", "b"], {"a", "b"}, 2) == pytest.approx(1 / 2)


def test_mrr_is_reciprocal_rank_of_first_relevant_within_k() -> None:
    assert mrr_at_k(["x", "y", "a", "b"], {"a", "b"}) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y", "a"], {"a"}, k=2) == 0.0
    assert mrr_at_k(["a"], {"a"}) == 1.0


def test_metrics_are_none_when_nothing_is_relevant() -> None:
    assert recall_at_k(["a"], set(), 10) is None
    assert precision_at_k(["a"], [], 10) is None
    assert mrr_at_k(["a"], ()) is None
    assert ndcg_at_k(["a"], {}) is None
    assert ndcg_at_k(["a"], {"a": 0, "b": -1}) is None


def test_duplicates_count_once_and_do_not_take_a_slot() -> None:
    # Three chunks of a.md map to the same path; b.md must still be in the top 2.
    ranked = ["a.md", "a.md", "a.md", "b.md"]
    assert top_k_unique(ranked, 2) == ["a.md", "b.md"]
    assert recall_at_k(ranked, {"a.md", "b.md"}, 2) == 1.0
    assert precision_at_k(ranked, {"a.md"}, 2) == pytest.approx(1 / 2)
    assert ndcg_at_k(["a", "a"], {"a": 1}, 10) == pytest.approx(1.0)


def test_ndcg_worked_by_hand() -> None:
    # grades: c=3, a=2, b=1; ranking b, x, a, c
    # DCG@10  = 1/log2(2) + 0/log2(3) + 2/log2(4) + 3/log2(5) = 1 + 0 + 1 + 1.292030 = 3.292030
    # IDCG@10 = 3/log2(2) + 2/log2(3) + 1/log2(4)             = 3 + 1.261860 + 0.5    = 4.761860
    # nDCG@10 = 3.292030 / 4.761860 = 0.691333
    graded = {"a": 2, "b": 1, "c": 3}
    ranked = ["b", "x", "a", "c"]
    assert ndcg_at_k(ranked, graded, 10) == pytest.approx(0.691333, abs=1e-6)
    # At k=3 c falls off: DCG = 2, IDCG is the same (3 graded ids fit) -> 0.420004
    assert ndcg_at_k(ranked, graded, 3) == pytest.approx(0.420004, abs=1e-6)


def test_ndcg_ideal_uses_only_top_k_grades() -> None:
    # Four relevant docs, k=2: the ideal is the two highest grades (3, 2).
    graded = {"a": 1, "b": 1, "c": 3, "d": 2}
    expected = (3 + 2 / math.log2(3)) / (3 + 2 / math.log2(3))
    assert ndcg_at_k(["c", "d", "a", "b"], graded, 2) == pytest.approx(expected)
    assert ndcg_at_k(["a", "b"], graded, 2) == pytest.approx((1 + 1 / math.log2(3)) / (3 + 2 / math.log2(3)))


def test_dcg_uses_log2_rank_plus_one_discount() -> None:
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 / math.log2(3) + 0.5)


def test_ranking_metrics_keys_and_binary_relevance_from_grades() -> None:
    result = ranking_metrics(["a", "b"], {"a": 2, "c": 0}, k=5)
    assert set(result) == {"recall@5", "precision@5", "mrr@5", "ndcg@5"}
    assert result["recall@5"] == 1.0
    assert result["precision@5"] == pytest.approx(0.2)
    assert result["mrr@5"] == 1.0
    assert result["ndcg@5"] == 1.0


def test_mean_skips_none_and_is_none_when_empty() -> None:
    assert mean([1.0, None, 0.0]) == pytest.approx(0.5)
    assert mean([None, None]) is None
    assert mean([]) is None


@pytest.mark.parametrize("k", [0, -1, True, 2.5])
def test_bad_k_raises(k: object) -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        recall_at_k(["a"], {"a"}, k)  # type: ignore[arg-type]


_ids = st.sampled_from([f"d{i}" for i in range(12)])


@given(
    ranked=st.lists(_ids, max_size=20),
    graded=st.dictionaries(_ids, st.integers(min_value=-1, max_value=3), max_size=12),
    k=st.integers(min_value=1, max_value=15),
)
def test_every_metric_is_between_zero_and_one(ranked: list[str], graded: dict[str, int], k: int) -> None:
    for value in ranking_metrics(ranked, graded, k).values():
        assert value is None or 0.0 <= value <= 1.0 + 1e-12


@given(
    graded=st.dictionaries(_ids, st.integers(min_value=1, max_value=3), min_size=1, max_size=12),
    k=st.integers(min_value=1, max_value=15),
    noise=st.lists(st.sampled_from(["n1", "n2", "n3"]), max_size=5),
)
def test_ndcg_is_one_for_the_ideal_ranking(graded: dict[str, int], k: int, noise: list[str]) -> None:
    ideal = sorted(graded, key=lambda doc: graded[doc], reverse=True) + noise
    assert ndcg_at_k(ideal, graded, k) == pytest.approx(1.0)
