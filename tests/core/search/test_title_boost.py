"""The title boost: a named term for a note the query names, on by default, off at weight 0."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.base.models import ChunkRef, Hit, SearchFilters, Term
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.search.title_boost import CONTAINS, DEFAULT_WEIGHT, EXACT, title_boosts

REPO = Path(__file__).resolve().parents[3]


def hit(rel: str, title: str, score: float) -> Hit:
    return Hit(ChunkRef("v", rel, 0, title), score, title, "", 0, 1, None, None, (Term("rrf", score),))


def test_exact_title_gets_the_full_weight_and_words_of_a_title_half() -> None:
    hits = [hit("a.md", "Sprint notes", 0.0300), hit("CAIRN-142 Token expiry.md", "CAIRN-142 Token expiry", 0.0290), hit("c.md", "cairn-142", 0.0200)]
    out = title_boosts(hits, "CAIRN-142", {}, 0.005)
    by = {h.chunk.rel_path: h for h in out}
    assert by["c.md"].contributions[-1] == Term(EXACT, 0.005)
    assert by["CAIRN-142 Token expiry.md"].contributions[-1] == Term(CONTAINS, 0.0025)
    assert [h.chunk.rel_path for h in out] == ["CAIRN-142 Token expiry.md", "a.md", "c.md"]
    assert all(abs(h.score - sum(t.value for t in h.contributions)) < 1e-12 for h in out)  # the terms add up


def test_weight_zero_changes_nothing() -> None:
    hits = [hit("a.md", "Soup", 0.02), hit("b.md", "Bread", 0.03)]
    assert title_boosts(hits, "soup", {}, 0.0) == hits


@pytest.fixture
def engine(tmp_path: Path, cairn_home: Path) -> Iterator[Engine]:
    vault = tmp_path / "link_vault"
    shutil.copytree(REPO / "tests" / "fixtures" / "link_vault", vault)
    eng = Engine(AppPaths(cairn_home), embedder_factory=None)
    eng.add_vault(vault)
    eng.sync(embed=False)
    yield eng
    eng.close()


def test_an_alias_names_its_note_in_a_real_search_and_the_setting_turns_it_off(engine: Engine) -> None:
    assert engine.config.title_boost == DEFAULT_WEIGHT
    request = SearchRequest("notebook", mode="keyword", k=5, filters=SearchFilters())
    top = engine.search(request).hits
    named = next(h for h in top if h.chunk.rel_path == "Projects/My Notes.md")
    assert Term(EXACT, DEFAULT_WEIGHT) in named.contributions  # "Notebook" is an alias of My Notes
    assert top[0].chunk.rel_path == "Projects/My Notes.md"
    engine.update_config(replace(engine.config, title_boost=0.0))
    off = engine.search(request).hits
    assert all(not t.name.startswith("title boost") for h in off for t in h.contributions)
    assert {h.chunk.rel_path for h in off} == {h.chunk.rel_path for h in top}


def test_aliases_are_read_without_parsing_every_note_of_the_link_graph(tmp_path: Path) -> None:
    """A cold search reads one alias list per hit; turning all 10k notes' links into objects cost ~20 ms."""
    from core.base.atomic import write_json_atomic
    from core.index.link_graph import FORMAT, LinkGraph

    path = tmp_path / "links.json"
    notes = {f"n{i}.md": {"v": "1", "aliases": [], "links": []} for i in range(50)}
    notes["soup.md"] = {"v": "1", "aliases": ["Tomato soup"], "links": []}
    write_json_atomic(path, {"format": FORMAT, "notes": notes}, compact=True)
    graph = LinkGraph.load(path)
    out = title_boosts([hit("soup.md", "Soup", 0.028), hit("n1.md", "Other", 0.03)], "tomato soup", {"v": graph}, 0.005)
    assert out[0].chunk.rel_path == "soup.md" and out[0].contributions[-1] == Term(EXACT, 0.005)
    assert graph._raw is not None  # still the raw JSON: nothing parsed the whole graph
