"""Fusion never buries what meaning found: a vector top-3 note stays in the fused top 10 notes."""

from __future__ import annotations

from core.base.models import chunk_id, split_chunk_id
from core.search.fusion import ScoredList, fuse_convex, keep_meaning_hits


def _cid(note: str, ordinal: int = 0) -> str:
    return chunk_id("v", f"{note}.md", ordinal)


def _note_ranks(fused) -> dict[str, int]:  # type: ignore[no-untyped-def]
    notes = list(dict.fromkeys(split_chunk_id(f.chunk_id)[1] for f in fused))
    return {n: i for i, n in enumerate(notes, 1)}


def test_a_note_meaning_ranks_first_is_lifted_back_into_the_top_ten() -> None:
    # Twelve keyword hits the vector side does not know, all far ahead; the vector side's best note is
    # "answer", which the keyword side never found: a heavy keyword share buries it at rank 13.
    keyword = [(_cid(f"kw{i:02d}"), 10.0 - i * 0.01) for i in range(12)]
    vector = [(_cid("answer"), 0.62), (_cid("kw00"), 0.30), (_cid("other"), 0.10)]
    fused = fuse_convex([ScoredList("keyword", 0.8, keyword, floor_at_min=False), ScoredList("meaning", 0.2, vector)])
    assert _note_ranks(fused)["answer.md"] > 10  # buried by plain fusion
    kept = keep_meaning_hits(fused, [cid for cid, _ in vector])
    ranks = _note_ranks(kept)
    assert ranks["answer.md"] <= 10 and ranks["kw00.md"] == 1
    assert ranks["other.md"] <= 10  # the vector side's third note too
    lifted = next(f for f in kept if f.chunk_id == _cid("answer"))
    assert any(t.name == "found by meaning (rank 1) → kept in the top 10" for t in lifted.terms)
    assert abs(lifted.score - sum(t.value for t in lifted.terms)) < 1e-9  # the terms still add up


def test_notes_already_in_the_top_ten_and_vector_rank_four_are_left_alone() -> None:
    keyword = [(_cid(f"kw{i:02d}"), 10.0 - i * 0.01) for i in range(12)]
    vector = [(_cid("kw01"), 0.9), (_cid("kw02"), 0.8), (_cid("kw03"), 0.7), (_cid("fourth"), 0.6)]
    fused = fuse_convex([ScoredList("keyword", 0.8, keyword, floor_at_min=False), ScoredList("meaning", 0.2, vector)])
    kept = keep_meaning_hits(fused, [cid for cid, _ in vector])
    assert [f.chunk_id for f in kept] == [f.chunk_id for f in fused]


def test_a_note_counts_once_however_many_of_its_chunks_the_vector_side_lists() -> None:
    keyword = [(_cid(f"kw{i:02d}"), 10.0 - i * 0.01) for i in range(12)]
    vector = [(_cid("answer", 0), 0.9), (_cid("answer", 1), 0.89), (_cid("answer", 2), 0.88), (_cid("second"), 0.5)]
    fused = fuse_convex([ScoredList("keyword", 0.9, keyword, floor_at_min=False), ScoredList("meaning", 0.1, vector)])
    kept = keep_meaning_hits(fused, [cid for cid, _ in vector])
    ranks = _note_ranks(kept)
    assert ranks["answer.md"] < ranks["second.md"] <= 10  # both kept, in the vector side's order
    assert ranks["kw00.md"] == 1
