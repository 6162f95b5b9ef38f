"""RRF maths on hand-written rank lists."""

from __future__ import annotations

import pytest

from core.search.fusion import RankedList, ScoredList, fuse_convex, fuse_rrf, normalise, rrf_term


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


def test_convex_fusion_adds_weighted_normalised_scores() -> None:
    fused = fuse_convex(
        [
            ScoredList("keyword", 0.6, [("a", 10.0), ("b", 5.0)], floor_at_min=False),
            ScoredList("meaning", 0.4, [("b", 0.9), ("c", 0.7), ("d", 0.5)]),
        ]
    )
    scores = {f.chunk_id: f.score for f in fused}
    assert scores["a"] == pytest.approx(0.6 * 1.0)  # BM25 divided by the best (its floor is 0)
    assert scores["b"] == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)  # cosines min-max normalised
    assert scores["c"] == pytest.approx(0.4 * 0.5)
    assert scores["d"] == pytest.approx(0.0)
    b = next(f for f in fused if f.chunk_id == "b")
    assert [t.name for t in b.terms] == ["keyword 0.50 × weight 0.6", "meaning 1.00 × weight 0.4"]
    assert sum(t.value for t in b.terms) == pytest.approx(b.score)


def test_convex_fusion_keeps_a_single_list_top_hit_above_mid_pack_hits_of_both() -> None:
    # RRF's failure mode: the keyword list's clear winner, missed by the vector side, fell
    # below notes both lists ranked mid-pack (1/61 < 1/75 + 1/75).
    kw = [("winner", 20.0)] + [(f"m{i}", 5.0 - i * 0.1) for i in range(20)]
    vec = [(f"v{i}", 0.8 - i * 0.01) for i in range(10)] + [(f"m{i}", 0.6 - i * 0.01) for i in range(20)]
    rrf_order = [f.chunk_id for f in fuse_rrf([RankedList("keyword", 1.0, [c for c, _ in kw]), RankedList("vector", 1.0, [c for c, _ in vec])])]
    convex_order = [f.chunk_id for f in fuse_convex([ScoredList("keyword", 0.5, kw, floor_at_min=False), ScoredList("meaning", 0.5, vec)])]
    both = [f"m{i}" for i in range(20)]
    assert rrf_order.index("winner") > min(rrf_order.index(m) for m in both)
    assert convex_order.index("winner") < min(convex_order.index(m) for m in both)


def test_normalise_handles_a_flat_or_empty_list() -> None:
    assert normalise([], floor_at_min=True) == {}
    assert normalise([("a", 0.3), ("b", 0.3)], floor_at_min=True) == {"a": 1.0, "b": 1.0}
