"""Pseudo-relevance feedback: the words the top keyword chunks share, searched again at a small weight."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from core.engine import Engine
from core.index.analysis import Stemmer
from core.search.feedback import FeedbackSettings, expansion_terms, surface_words
from core.search.search import SearchRequest
from tests.helpers import bag_of_words_engine

NOTES = {
    "Starter.md": "# Sourdough starter\n\nFeed the sourdough starter with flour and water daily; the levain ferments overnight.\n",
    "Bread.md": "# Sourdough bread\n\nMix the sourdough starter into the flour; the levain rises in a warm kitchen.\n",
    "Levain.md": "# Preferment\n\nA levain is a preferment kept at room temperature before baking.\n",
    "Garden.md": "# Garden\n\nTomatoes want sun, water in the morning, and a stake once they are knee high.\n",
    "Bike.md": "# Bike\n\nOil the chain after a wet ride and check the tyre pressure weekly.\n",
    "Taxes.md": "# Taxes\n\nFile the return before April; keep receipts for five years.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return bag_of_words_engine(tmp_path_factory, NOTES)


def _df(counts: dict[str, int]):  # type: ignore[no-untyped-def]
    def lookup(terms: Collection[str]) -> dict[str, int]:
        return {t: counts.get(t, 0) for t in terms}

    return lookup


def test_a_rare_word_the_top_chunks_share_is_added_and_the_query_words_are_not() -> None:
    docs = [
        ("the levain and the starter, flour", 9.0),
        ("a levain with flour and water", 7.0),
        ("water the garden", 2.0),
    ]
    df = _df({"levain": 3, "water": 40, "flour": 5, "starter": 4, "garden": 2})
    extra = expansion_terms(
        docs, {"flour", "starter"}, Stemmer(), df, 100, FeedbackSettings(docs=3, terms=5, weight=0.3)
    )
    assert next(iter(extra)) == "levain"  # shared by two chunks and rare: the best word, at the full weight
    assert extra["levain"] == pytest.approx(0.3)
    assert "flour" not in extra and "starter" not in extra  # already asked for
    assert "garden" not in extra  # only one feedback chunk holds it: that chunk's own word
    assert all(0 < w <= 0.3 for w in extra.values())


def test_nothing_to_add_without_scored_text() -> None:
    assert expansion_terms([], {"x"}, Stemmer(), _df({}), 10) == {}
    assert expansion_terms([("levain levain", 0.0)], set(), Stemmer(), _df({"levain": 2}), 10) == {}


def _hybrid(engine: Engine, query: str, **kw: object):  # type: ignore[no-untyped-def]
    return engine.search(SearchRequest(query, mode="hybrid", k=10, **kw))  # type: ignore[arg-type]


def test_feedback_finds_a_note_without_the_typed_words_and_says_so(engine: Engine) -> None:
    query = "feed sourdough starter flour"
    plain = _hybrid(engine, query, feedback=False)
    assert not any("Levain.md" in c.chunk_id for c in plain.keyword_candidates)
    fed = _hybrid(engine, query)
    assert any("Levain.md" in c.chunk_id for c in fed.keyword_candidates)
    top = fed.hits[0]
    assert top.chunk.rel_path in ("Starter.md", "Bread.md")
    names = [t.name for t in top.contributions]
    assert any(n.startswith("keyword + feedback (") and "levain" in n for n in names), names
    assert sum(t.value for t in top.contributions) == pytest.approx(top.score)


def test_keyword_mode_searches_the_typed_words_only(engine: Engine) -> None:
    resp = engine.search(SearchRequest("feed sourdough starter flour", mode="keyword", k=10))
    assert not any("Levain.md" in c.chunk_id for c in resp.keyword_candidates)
    assert not any("feedback" in t.name for h in resp.hits for t in h.contributions)


@pytest.mark.parametrize("query", ["sourdough flour", '"sourdough starter" flour feed'])
def test_short_lookups_and_phrases_get_no_feedback(engine: Engine, query: str) -> None:
    resp = _hybrid(engine, query)
    assert not any("Levain.md" in c.chunk_id for c in resp.keyword_candidates)
    assert not any("feedback" in t.name for h in resp.hits for t in h.contributions)


def test_feedback_words_are_named_as_written_not_as_stems() -> None:
    texts = ["Configure the primary device.", "The devices: configuration of the primary device"]
    stemmer = Stemmer()
    stems = tuple(stemmer.term(w) or w for w in ("device", "primary", "configuration"))
    assert stems == ("devic", "primari", "configur")  # what the index keeps
    assert surface_words(stems, texts, stemmer) == ("device", "primary", "configure")
    assert surface_words(("zzz",), texts, stemmer) == ("zzz",)  # no spelling found: left as it is


def test_the_why_term_lists_feedback_words_as_written(engine: Engine) -> None:
    fed = _hybrid(engine, "feed sourdough starter flour")
    name = next(t.name for t in fed.hits[0].contributions if t.name.startswith("keyword + feedback ("))
    words = name.removeprefix("keyword + feedback (").split(")")[0].split(", ")
    written = " ".join(NOTES.values()).lower()
    assert words and all(f" {w}" in written for w in words), words  # each a word of the notes, not a stem
