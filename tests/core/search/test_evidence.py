"""Keyword evidence strength and the blend weight it sets: pure functions on hand-written inputs."""

from __future__ import annotations

import pytest

from core.search.evidence import (
    SHARE_RANGE,
    KeywordEvidence,
    adapted_share,
    agreement,
    explain,
    idf_share,
    keyword_evidence,
    peak,
    rarity,
)


def test_a_word_in_one_chunk_is_rare_and_a_word_in_every_chunk_is_not() -> None:
    assert idf_share(1, 1000) == pytest.approx(1.0)
    assert idf_share(1000, 1000) < 0.11
    assert idf_share(0, 1000) == 0.0  # the vault lacks it: no evidence


def test_only_common_or_missing_words_give_low_rarity() -> None:
    common = rarity({"file": 600, "use": 800, "note": 700}, 1000)
    rare = rarity({"execute_write_fn": 2, "commit": 40}, 1000)
    missing = rarity({"archive": 0, "project": 300}, 1000)
    assert common < 0.3
    assert rare == pytest.approx(1.0)
    assert missing < common + 0.2


def test_a_flat_score_curve_has_no_peak_and_a_lone_winner_has_a_high_one() -> None:
    assert peak([5.0, 4.9, 4.9, 4.8, 4.8, 4.7]) < 0.05
    assert peak([12.0, 3.0, 2.5, 2.0, 2.0]) > 0.8
    assert peak([]) == 0.0
    assert peak([3.0]) == 1.0


def test_agreement_counts_keyword_top_notes_the_vector_side_ranks_high() -> None:
    assert agreement(["a", "a", "b", "c"], ["c", "x", "b"]) == pytest.approx(2 / 3)  # a's two chunks count once
    assert agreement(["a", "b", "c"], ["x", "y"]) == 0.0
    assert agreement([], ["x"]) == 0.0


def test_weak_evidence_moves_the_blend_towards_meaning_and_says_so() -> None:
    weak = keyword_evidence({"hide": 300, "folder": 400, "search": 500}, 1000, [5.0, 4.9, 4.8, 4.8, 4.7], ["a", "b", "c"], ["x", "y", "z"])
    assert weak.label == "weak"
    share = adapted_share(0.5, weak)
    assert SHARE_RANGE[0] <= share < 0.5
    text = explain(weak, share)
    assert text.startswith(f"keyword evidence weak ({weak.strength:.2f}")
    assert text.endswith(f"→ semantic weight {1 - share:.2f}")


def test_strong_evidence_moves_the_blend_towards_keywords_within_the_range() -> None:
    strong = KeywordEvidence(rarity=1.0, peak=0.9, agreement=1.0)
    assert strong.label == "strong"
    share = adapted_share(0.5, strong)
    assert 0.5 < share <= SHARE_RANGE[1]
    assert "keyword weight" in explain(strong, share)
    assert adapted_share(0.75, strong) == SHARE_RANGE[1]  # never past the range


def test_without_a_vector_list_agreement_does_not_count_against_keywords() -> None:
    ev = keyword_evidence({"x": 1}, 100, [3.0, 1.0], ["a"], [])
    assert ev.agreement == 1.0
