"""Whole searches over a real index: hub notes, exact-beats-vague, stop-words, folding per note."""

from __future__ import annotations

import pytest

from core.engine import Engine
from core.search.search import NO_EXACT_MATCHES, SearchRequest
from tests.helpers import bag_of_words_engine

NOTES = {
    "Index.md": "# Index\n\n" + "\n".join(f"* [Publish step {i}](notes/{i}.md) - publish vault notes {i}" for i in range(40)),
    "Publish.md": "# Publish\n\nTo publish the vault, export it to HTML and upload the folder to the web server.\n",
    "Garden.md": "# Garden\n\nTomatoes want sun, water in the morning, and a stake once they are knee high.\n",
    "Snorbleflax.md": "# Odd word\n\nThe snorbleflax setting turns on the experimental renderer.\n",
    "Long.md": "# Long\n\n" + "\n\n".join(f"## Part {i}\n\nSourdough starter feeding, part {i}: flour and water, " * 3 for i in range(8)),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return bag_of_words_engine(tmp_path_factory, NOTES)


def _search(engine: Engine, query: str, **kw: object) -> object:
    return engine.search(SearchRequest(query, mode="hybrid", k=5, **kw))  # type: ignore[arg-type]


def test_a_hub_note_of_links_does_not_lead_and_says_why(engine: Engine) -> None:
    resp = _search(engine, "how do I publish my vault")
    paths = [h.chunk.rel_path for h in resp.hits]
    assert paths[0] == "Publish.md", paths
    hub = next(h for h in resp.hits if h.chunk.rel_path == "Index.md")
    names = [t.name for t in hub.contributions]
    assert any(n.startswith("mostly links (") and "→ ×0.40" in n for n in names), names
    assert sum(t.value for t in hub.contributions) == pytest.approx(hub.score)


def test_stop_words_are_not_highlighted(engine: Engine) -> None:
    hit = _search(engine, "how do I publish my vault").hits[0]
    assert "**publish**" in hit.snippet.lower()
    assert "**my**" not in hit.snippet.lower() and "**do**" not in hit.snippet.lower()


def test_the_only_note_with_a_rare_word_comes_first_with_a_named_term(engine: Engine) -> None:
    resp = _search(engine, "snorbleflax garden tomatoes sun")
    assert resp.exact_matches
    resp = _search(engine, "snorbleflax")
    assert resp.hits[0].chunk.rel_path == "Snorbleflax.md"


def test_no_exact_matches_is_said_and_related_notes_still_shown(engine: Engine) -> None:
    resp = _search(engine, "qwxyz vvvrrr")
    assert not resp.exact_matches
    assert NO_EXACT_MATCHES in resp.warnings
    assert _search(engine, "publish").exact_matches


def test_one_row_per_note_with_the_rest_folded(engine: Engine) -> None:
    resp = _search(engine, "sourdough starter flour", per_note_cap=1)
    long_rows = [h for h in resp.hits if h.chunk.rel_path == "Long.md"]
    assert len(long_rows) == 1
    assert long_rows[0].more and all(m.chunk.rel_path == "Long.md" for m in long_rows[0].more)
    assert all(m.snippet for m in long_rows[0].more)
    capped = _search(engine, "sourdough starter flour", per_note_cap=3)
    assert len([h for h in capped.hits if h.chunk.rel_path == "Long.md"]) == 3


def test_exact_hit_is_lifted_over_vector_only_hits(engine: Engine) -> None:
    # Whatever the vector side says, a keyword hit holding every query word is not below a
    # vector-only hit holding none; the lift is a named term.
    resp = _search(engine, "experimental renderer")
    first_exact = next(i for i, h in enumerate(resp.hits) if h.chunk.rel_path == "Snorbleflax.md")
    vague = [i for i, h in enumerate(resp.hits) if h.bm25 is None]
    assert all(first_exact < i for i in vague)


def test_semantic_mode_makes_no_claim_about_exact_words(engine: Engine) -> None:
    resp = engine.search(SearchRequest("qwxyz vvvrrr", mode="semantic", k=5))
    assert resp.exact_matches and NO_EXACT_MATCHES not in resp.warnings
