"""Honest result lists over a real index: matches first, a few related notes after, filters hard."""

from __future__ import annotations

import pytest

from core.base.models import HitKind, SearchFilters
from core.engine import Engine
from core.search.result_groups import RELATED_LIMIT
from core.search.search import SearchRequest
from core.serialize import search_json
from tests.helpers import bag_of_words_engine

# Twelve notes share the words "garden", "soil" and "water" (the vector side finds them all
# near any gardening query); only one holds "zorblat", and only notes under `templates/`
# mention "template".
NOTES = {
    "Rare.md": "# Rare\n\nThe zorblat is planted in garden soil with water every morning.\n",
    "templates/Daily.md": "# Daily\n\nA daily template for garden soil and water notes.\n",
    "templates/Weekly.md": "# Weekly\n\nGarden soil and water plans for the week, written by hand.\n",
    "templates/Review.md": "# Review\n\nWhat grew in the garden soil, how much water it took.\n",
    "other/Template guide.md": "# Guide\n\nHow to write a template for garden soil and water.\n",
}
NOTES.update({f"plain/Note {i}.md": f"# Note {i}\n\nGarden soil and water, day {i}.\n" for i in range(10)})


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return bag_of_words_engine(tmp_path_factory, NOTES)


def test_a_word_in_one_note_gives_one_match_and_a_few_labelled_related_notes(engine: Engine) -> None:
    resp = engine.search(SearchRequest(grouped=True, query="zorblat garden", mode="hybrid", k=10))
    kinds = [h.kind for h in resp.hits]
    # "garden" is in every note, so every one is a match; the rare word alone is the honest case.
    assert all(k == HitKind.MATCH for k in kinds)
    resp = engine.search(SearchRequest(grouped=True, query="zorblat", mode="hybrid", k=10))
    assert [h.chunk.rel_path for h in resp.hits if h.kind == HitKind.MATCH] == ["Rare.md"]
    assert resp.match_count == 1
    related = [h for h in resp.hits if h.kind == HitKind.RELATED]
    assert 0 < len(related) <= RELATED_LIMIT
    assert len(resp.hits) < 10  # never "10 results" for a word one note holds
    assert resp.hits[0].kind == HitKind.MATCH and all(h.kind == HitKind.RELATED for h in resp.hits[1:])


def test_folder_scope_holds_for_matches_and_related_notes(engine: Engine) -> None:
    scoped = SearchFilters(folders=("templates",))
    resp = engine.search(SearchRequest(grouped=True, query="template", mode="hybrid", k=10, filters=scoped))
    assert all(h.chunk.rel_path.startswith("templates/") for h in resp.hits)
    assert [h.chunk.rel_path for h in resp.hits if h.kind == HitKind.MATCH] == ["templates/Daily.md"]
    for h in resp.hits:
        holds = "template" in h.text.lower()
        assert (h.kind == HitKind.MATCH) == holds, (h.chunk.rel_path, h.kind)


def test_matches_ranked_below_related_notes_still_come_first(engine: Engine) -> None:
    resp = engine.search(SearchRequest(grouped=True, query="template garden soil water", mode="semantic", k=10))
    assert all(h.kind == HitKind.MATCH for h in resp.hits)  # semantic mode makes no word claim
    resp = engine.search(SearchRequest(grouped=True, query="template", mode="hybrid", k=10))
    kinds = [h.kind for h in resp.hits]
    assert kinds == sorted(kinds, key=lambda k: k != HitKind.MATCH)
    assert {h.chunk.rel_path for h in resp.hits if h.kind == HitKind.MATCH} == {"templates/Daily.md", "other/Template guide.md"}


def test_json_names_each_hit_kind_and_counts_matches(engine: Engine) -> None:
    out = search_json(engine.search(SearchRequest(grouped=True, query="zorblat", mode="hybrid", k=10)))
    assert out["matches"] == 1 and out["related"] == len(out["hits"]) - 1
    assert [h["kind"] for h in out["hits"]][:2] == ["match", "related"]


def test_keyword_mode_lists_only_matches(engine: Engine) -> None:
    resp = engine.search(SearchRequest(grouped=True, query="zorblat", mode="keyword", k=10))
    assert [h.kind for h in resp.hits] == [HitKind.MATCH]


def test_a_filter_only_browse_lists_every_note_as_a_match(engine: Engine) -> None:
    resp = engine.search(SearchRequest(grouped=True, query="", mode="hybrid", k=5, filters=SearchFilters(folders=("plain",))))
    assert len(resp.hits) == 5 and resp.match_count == 5


def test_a_path_prefix_is_a_hard_filter_for_both_lists(engine: Engine) -> None:
    # The app's tree scopes a Dendron-style dotted hierarchy this way ("dendron.topic.").
    scoped = SearchFilters(path_prefixes=("plain/Note 1",))
    for mode in ("hybrid", "semantic", "keyword"):
        resp = engine.search(SearchRequest(grouped=True, query="garden soil water", mode=mode, k=10, filters=scoped))
        assert resp.hits and all(h.chunk.rel_path.startswith("plain/Note 1") for h in resp.hits), mode
        candidates = resp.vector_candidates + resp.keyword_candidates
        assert candidates and all(c.chunk_id.split("\x1f")[1].startswith("plain/Note 1") for c in candidates), mode


def test_an_ungrouped_search_keeps_the_ranking_and_still_names_each_kind(engine: Engine) -> None:
    # Ask and evaluation read the ranking as it is; the kind is still on every hit.
    plain = engine.search(SearchRequest("zorblat", mode="hybrid", k=10))
    assert len(plain.hits) == 10 and plain.match_count == 1
    assert {h.kind for h in plain.hits} == {HitKind.MATCH, HitKind.RELATED}
