"""The extractive answer quotes prose as a reader sees it: link labels, not link syntax."""

from __future__ import annotations

from core.answer.extractive import extract_answer
from core.answer.models import Source


def test_quoted_sentences_show_link_labels() -> None:
    text = "The release is signed off by [[People/Priya Natarajan|Priya]] using [the checklist](Release%20checklist.md) every time."
    src = Source(1, "v", "a.md", "A", "", (0,), 0, len(text), text, ())
    answer = extract_answer("who signs off the release checklist", [src])
    assert "signed off by Priya using the checklist every time. [1]" in answer
    assert "[[" not in answer and "](" not in answer
