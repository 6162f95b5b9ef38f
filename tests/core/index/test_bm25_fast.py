"""The numpy BM25F path must rank and score exactly as Whoosh does."""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh import query as wq

from core.base.paths import AppPaths
from core.engine import Engine
from core.search.query import parse_query

QUERIES = [
    "sourdough rest overnight",
    "what did we decide about the embedding model for the vector index",
    "backup schedule NAS restic offsite retention",
    "token expired after laptop sleep bridge port",
    "tomato soup oven temperature",
    "release checklist owner",
]


@pytest.fixture(scope="module")
def keyword_index(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("home")
    engine = Engine(AppPaths(home), embedder_factory=None)
    vault = Path(__file__).resolve().parents[3] / "resources" / "sample-vault"
    name = engine.add_vault(vault).name
    engine.sync([name], embed=False)
    yield engine.index_for(name).keyword
    engine.close()


@pytest.mark.parametrize("text", QUERIES)
def test_fast_scores_equal_whoosh_scores(keyword_index, text: str) -> None:  # type: ignore[no-untyped-def]
    parsed = parse_query(text).query
    fast = keyword_index.search(parsed, parsed.filters, 50)
    searcher = keyword_index._ix.searcher(weighting=keyword_index._weighting)
    slow = searcher.search(keyword_index.build_query(parsed), limit=50, mask=wq.Term("confidentiality", "restricted"))
    slow_scores = {h["chunk_id"]: h.score for h in slow}
    assert fast, "the query should match something in the sample vault"
    assert [h.chunk_id for h in fast][:10] == [h["chunk_id"] for h in slow][:10]
    for hit in fast:
        assert hit.score == pytest.approx(slow_scores[hit.chunk_id], rel=1e-5)


def test_fast_path_respects_filters_and_the_restricted_mask(keyword_index) -> None:  # type: ignore[no-untyped-def]
    parsed = parse_query("notes folder:Recipes").query
    hits = keyword_index.search(parsed, parsed.filters, 50)
    assert hits and all(keyword_index.stored([h.chunk_id])[h.chunk_id].rel_path.startswith("Recipes/") for h in hits)
    salary = parse_query("salary review compensation").query
    assert all("Salary" not in h.chunk_id for h in keyword_index.search(salary, salary.filters, 50))


def test_snippet_stemmer_agrees_with_the_index_analyzer() -> None:
    from core.index.analysis import Stemmer
    from core.index.keyword_schema import analyzer

    ana = analyzer()
    stemmer = Stemmer(ana)
    for text in ["Café culture **bench** rest ERR_TOKEN_EXPIRED v1.5 naïve Ångström", "The quick brown foxes were running; it is 220°C."]:
        assert stemmer.spans(text) == [(t.startchar, t.endchar, t.text) for t in ana(text, chars=True, mode="index")]


def test_expansion_terms_add_their_weighted_share_of_whoosh_scores(keyword_index) -> None:  # type: ignore[no-untyped-def]
    """An expansion word at weight w adds w times what the same word typed in the body would add."""
    base = parse_query("sourdough").query
    plain = {h.chunk_id: h.score for h in keyword_index.search(base, base.filters, 50)}
    # as an expansion word "oven" is scored in the body only, at weight 0.5
    expanded = {h.chunk_id: h.score for h in keyword_index.search(base, base.filters, 50, expansion={"oven": 0.5})}
    searcher = keyword_index._ix.searcher(weighting=keyword_index._weighting)
    body_only = {h["chunk_id"]: h.score for h in searcher.search(wq.Term("body", "oven"), limit=200)}
    assert set(expanded) >= set(plain) and set(expanded) - set(plain), "the expansion word should find new chunks"
    for cid, score in expanded.items():
        assert score == pytest.approx(plain.get(cid, 0.0) + 0.5 * body_only.get(cid, 0.0), rel=1e-5)


@pytest.mark.parametrize("text", QUERIES)
def test_plain_python_path_ranks_and_scores_as_the_numpy_path(keyword_index, text: str) -> None:  # type: ignore[no-untyped-def]
    """A process without numpy (a keyword `cairn search`) scores in plain Python: same list, same scores."""
    parsed = parse_query(text).query
    with_numpy = keyword_index.search(parsed, parsed.filters, 50)
    keyword_index._fast.force_python = True
    try:
        plain = keyword_index.search(parsed, parsed.filters, 50)
    finally:
        keyword_index._fast.force_python = False
    assert [h.chunk_id for h in plain] == [h.chunk_id for h in with_numpy]
    for a, b in zip(plain, with_numpy):
        assert a.score == pytest.approx(b.score, rel=1e-6)


def test_plain_python_path_gives_way_to_numpy_past_its_budget(keyword_index) -> None:  # type: ignore[no-untyped-def]
    from core.index import bm25_python
    from core.index.bm25_fast import _leaf_readers

    searcher = keyword_index._ix.searcher(weighting=keyword_index._weighting)
    readers = _leaf_readers(searcher.ixreader)
    parsed = parse_query("backup schedule sourdough").query
    clauses = keyword_index._clauses(parsed)
    args = (searcher, readers, clauses, 10, 0.9, 0.4, bm25_python.LengthCache())
    assert bm25_python.top(*args, budget=None)
    assert bm25_python.top(*args, budget=1) is None
