"""RRF maths on hand-written rank lists."""

from __future__ import annotations

import pytest

from core.search.fusion import RankedList, fuse_rrf, rrf_term


def test_rrf_term_is_weight_over_k_plus_rank() -> None:
    assert rrf_term(1, 60, 1.0) == pytest.approx(1 / 61)
    assert rrf_term(3, 10, 0.5) == pytest.approx(0.5 / 13)


def test_item_in_both_lists_beats_items_in_one() -> None:
    fused = fuse_rrf([RankedList("keyword", 1.0, ["a", "b", "c"]), RankedList("vector", 1.0, ["c", "d", "a"])], k=60)
    scores = {f.chunk_id: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 63)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["d"] == pytest.approx(1 / 62)
    assert [f.chunk_id for f in fused] == ["a", "c", "b", "d"]  # ties broken by id


def test_terms_are_named_and_add_up_to_the_score() -> None:
    fused = fuse_rrf([RankedList("keyword", 2.0, ["x"]), RankedList("vector", 0.5, ["y", "x"])], k=1)
    x = next(f for f in fused if f.chunk_id == "x")
    assert [t.name for t in x.terms] == ["rrf_keyword (w=2, rank 1)", "rrf_vector (w=0.5, rank 2)"]
    assert sum(t.value for t in x.terms) == pytest.approx(x.score)
    assert x.score == pytest.approx(2.0 / 2 + 0.5 / 3)


def test_weights_can_reverse_the_order() -> None:
    lists = [RankedList("keyword", 1.0, ["a", "b"]), RankedList("vector", 1.0, ["b", "a"])]
    assert [f.chunk_id for f in fuse_rrf(lists)] == ["a", "b"]
    heavy = [RankedList("keyword", 0.5, ["a", "b"]), RankedList("vector", 1.5, ["b", "a"])]
    assert [f.chunk_id for f in fuse_rrf(heavy)][0] == "b"


def test_duplicates_within_a_list_count_once() -> None:
    fused = fuse_rrf([RankedList("keyword", 1.0, ["a", "a", "b"])], k=0)
    scores = {f.chunk_id: f.score for f in fused}
    assert scores == {"a": pytest.approx(1.0), "b": pytest.approx(1 / 3)}


def test_negative_k_is_rejected() -> None:
    with pytest.raises(ValueError):
        fuse_rrf([RankedList("keyword", 1.0, ["a"])], k=-1)
