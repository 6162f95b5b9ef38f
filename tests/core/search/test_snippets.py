"""Snippets read as prose: link labels instead of link syntax, highlights on the right words."""

from __future__ import annotations

from core.index.analysis import Stemmer
from core.index.keyword_schema import analyzer
from core.search.snippets import make_snippet


def snippet(text: str, *words: str) -> str:
    stemmer = Stemmer(analyzer())
    stems = {t for w in words if (t := stemmer.term(w)) is not None}
    return make_snippet(text, stems, stemmer)


def test_links_show_their_labels_and_the_highlight_lands_on_the_label() -> None:
    text = "The backup runs nightly, see [[NAS backup schedule|the schedule]] and [restic docs](How-to/Restic.md#Prune)."
    out = snippet(text, "schedule", "restic")
    assert out == "The backup runs nightly, see the **schedule** and **restic** docs."


def test_a_link_target_no_longer_shows_only_its_label_does() -> None:
    out = snippet("Owner: [[People/Priya Natarajan|Priya]] signs off.", "signs")
    assert out == "Owner: Priya **signs** off."


def test_code_keeps_its_brackets() -> None:
    assert snippet("Run `[[ -f x ]]` in bash.", "bash") == "Run `[[ -f x ]]` in **bash**."
