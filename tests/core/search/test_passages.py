"""Note-level and passage-level choice: notes add a share of their next passage; rows show the answering section."""

from __future__ import annotations

import pytest

from core.base.models import ChunkRef, Hit, chunk_id, split_chunk_id
from core.index.analysis import Stemmer
from core.search.fusion import Fused
from core.search.passages import ALIKE_AT, ALIKE_FROM, aggregate_notes, choose_passages, independence
from core.search.search import SearchRequest
from tests.helpers import bag_of_words_engine


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


def test_a_next_passage_that_repeats_the_best_one_adds_nothing() -> None:
    """Two halves of one abstract (cosine 0.95) are one piece of evidence; two sections (0.5) are two."""
    fused = [_f("single.md", 0, 0.80), _f("halves.md", 0, 0.78), _f("halves.md", 1, 0.70), _f("sections.md", 0, 0.76), _f("sections.md", 4, 0.60)]
    cosines = {("halves.md", "halves.md"): 0.95, ("sections.md", "sections.md"): 0.5}

    def alike(a: str, b: str) -> float | None:
        return cosines[(split_chunk_id(a)[1], split_chunk_id(b)[1])]

    out = aggregate_notes(fused, share=0.3, alike=alike)
    notes = list(dict.fromkeys(split_chunk_id(f.chunk_id)[1] for f in out))
    assert notes == ["sections.md", "single.md", "halves.md"]
    assert out[0].score == pytest.approx(0.76 + 0.3 * 0.60)
    assert [t.name for t in out[0].terms] == ["note's next passage (0.3 × 0.60, alike 0.50 → ×1.00)"]
    halves = next(f for f in out if f.chunk_id == chunk_id("v", "halves.md", 0))
    assert halves.score == pytest.approx(0.78) and halves.terms == ()  # no term for a share of nothing


def test_a_partly_alike_next_passage_counts_in_part() -> None:
    assert independence(0.5) == 1.0 and independence(None) == 1.0  # no vectors: the full share
    assert independence(0.95) == 0.0
    assert independence((ALIKE_FROM + ALIKE_AT) / 2) == pytest.approx(0.5)
    fused = [_f("a.md", 0, 0.8), _f("a.md", 1, 0.5)]
    out = aggregate_notes(fused, share=0.3, alike=lambda a, b: (ALIKE_FROM + ALIKE_AT) / 2)
    assert out[0].score == pytest.approx(0.8 + 0.3 * 0.5 * 0.5)


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


def test_a_search_compares_a_notes_passages_by_their_stored_vectors(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Through the engine: the next passage's term names the cosine of the two chunks' own vectors."""
    notes = {
        "Sourdough.md": "# Sourdough\n\n## Starter\n\nFeed the sourdough starter with flour and water daily.\n\n"
        "## Baking\n\nBake the sourdough loaf hot; the starter makes it rise overnight.\n",
        "Garden.md": "# Garden\n\nTomatoes want sun and water in the morning.\n",
        "Bike.md": "# Bike\n\nOil the chain after a wet ride.\n",
    }
    engine = bag_of_words_engine(tmp_path_factory, notes)
    try:
        hit = engine.search(SearchRequest("sourdough starter flour rise", mode="hybrid", k=3, per_note_cap=1)).hits[0]
        assert hit.chunk.rel_path == "Sourdough.md"
        names = [t.name for t in hit.contributions if t.name.startswith("note's next passage")]
        assert len(names) == 1 and ", alike " in names[0]
        ids = [chunk_id("v", "Sourdough.md", c.ordinal) for c in engine.index_for("v").keyword.stored_for_note("Sourdough.md")]
        side = next(s for s in engine._sides(semantic=True) if s.name == "v")
        assert side.vectors is not None
        vecs = side.vectors.chunk_vectors(ids)
        cosines = {f"{float(vecs[a] @ vecs[b]):.2f}" for a in ids for b in ids if a < b and a in vecs and b in vecs}
        assert names[0].split(", alike ")[1].split(" ")[0] in cosines
    finally:
        engine.close()
