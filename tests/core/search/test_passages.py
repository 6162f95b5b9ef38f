"""Note-level and passage-level choice: notes add a share of their next passage; rows show the answering section."""

from __future__ import annotations

import pytest

from core.base.models import ChunkRef, Hit, chunk_id
from core.index.analysis import Stemmer
from core.search.fusion import Fused
from core.search.passages import aggregate_notes, choose_passages


def _f(note: str, ordinal: int, score: float) -> Fused:
    return Fused(chunk_id("v", note, ordinal), score, ())


def test_a_note_with_two_good_passages_passes_a_note_with_one_lucky_one() -> None:
    fused = [_f("lucky.md", 0, 0.80), _f("solid.md", 0, 0.78), _f("solid.md", 1, 0.70), _f("other.md", 0, 0.5)]
    out = aggregate_notes(fused, share=0.1)
    assert [f.chunk_id for f in out][:2] == [chunk_id("v", "solid.md", 0), chunk_id("v", "lucky.md", 0)]
    top = out[0]
    assert top.score == pytest.approx(0.78 + 0.07)
    assert [t.name for t in top.terms] == ["note's next passage (0.1 × 0.70)"]
    assert out[2].chunk_id == chunk_id("v", "solid.md", 1) and out[2].score == pytest.approx(0.70)  # unchanged


def test_no_share_leaves_the_list_alone() -> None:
    fused = [_f("a.md", 0, 0.5), _f("a.md", 1, 0.4)]
    assert aggregate_notes(fused, share=0.0) == fused


def _hit(ordinal: int, heading: str, text: str, score: float, more: tuple[Hit, ...] = ()) -> Hit:
    return Hit(
        chunk=ChunkRef("v", "Callouts.md", ordinal, heading),
        score=score,
        title="Callouts",
        snippet="",
        start_byte=0,
        end_byte=len(text),
        bm25=None,
        vector=None,
        contributions=(),
        text=text,
        more=more,
    )


def test_the_row_shows_the_section_whose_heading_names_the_query() -> None:
    stemmer = Stemmer()
    stems = frozenset(t for _, _, t in stemmer.spans("callout types"))
    supported = _hit(5, "Callouts > Supported types", "You can use several callout types: note, tip, warning.", 0.6)
    row = _hit(3, "Callouts > Foldable callouts", "Make a callout foldable with a plus or minus.", 0.9, more=(supported,))
    out = choose_passages([row], stems, stemmer)
    assert out[0].chunk.heading_path == "Callouts > Supported types"
    assert out[0].score == 0.9  # the note's score: the ranking does not change
    assert out[0].more[0].chunk.ordinal == 3  # the passage shown before is one click away
    assert "passage shown: section 'Supported types' names the query" in [t.name for t in out[0].contributions]


def test_a_row_whose_own_heading_answers_is_kept() -> None:
    stemmer = Stemmer()
    stems = frozenset(t for _, _, t in stemmer.spans("supported types"))
    other = _hit(3, "Callouts > Foldable callouts", "Foldable callouts.", 0.6)
    row = _hit(5, "Callouts > Supported types", "Supported types: note, tip.", 0.9, more=(other,))
    assert choose_passages([row], stems, stemmer) == [row]
