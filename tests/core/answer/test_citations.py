"""Citation markers are parsed and checked against the sources."""

from __future__ import annotations

from core.answer.citations import check_citations


def test_valid_markers_are_kept_in_order_of_first_use() -> None:
    check = check_citations("Rest it 12 hours [2]. Bake hot [1][2].", 3)
    assert check.cited == (2, 1) and check.invalid == ()
    assert check.text == "Rest it 12 hours [2]. Bake hot [1][2]."


def test_markers_pointing_nowhere_are_removed_and_reported() -> None:
    check = check_citations("It is 220°C [7]. Also [1, 9].", 2)
    assert check.invalid == (7, 9) and check.cited == (1,)
    assert "[7]" not in check.text and check.text == "It is 220°C. Also [1]."


def test_no_markers_means_nothing_cited() -> None:
    assert check_citations("No idea.", 3).cited == ()
