"""Property filters (`status:draft`, `rating>=4`, `has:x`, `-status:done`, `task:open`) on both lists.

A real index of tests/fixtures/structured_vault (a `.obsidian/types.json`, daily notes, notes
with bad values); each filter is checked on the keyword list, the vector list and hybrid, which
must agree because both are built from the same terms (`core.index.property_terms`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.property_query import parse_where
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder

V = "structured"
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "structured_vault"
WITH_PRICING = {p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*.*") if p.is_file() and "pricing" in p.read_text(errors="replace").lower()}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("v") / V
    shutil.copytree(FIXTURE, root)
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(root, name=V)
    eng.sync()
    eng.embed_vault(V)
    yield eng
    eng.close()


def notes(engine: Engine, query: str, mode: str = "keyword", where: tuple[str, ...] = ()) -> set[str]:
    filters = SearchFilters(where=tuple(parse_where(w) for w in where))
    resp = engine.search(SearchRequest(query, mode=mode, k=50, filters=filters, per_note_cap=1))
    # The toy embedder (64 hashed word buckets) also returns notes sharing no word with the query: the
    # filters are checked among the notes that hold the query's word, on every list alike.
    return {h.chunk.rel_path for h in resp.hits} & WITH_PRICING


CASES = [
    ("pricing status:draft", {"Projects/Pricing.md", "Projects/Odd.md"}),  # Odd's status is a list holding "draft"
    ("pricing -status:done", {"Projects/Pricing.md", "Projects/Odd.md", "Projects/Launch.md", "Daily/2026-11-24.md", "Journal/Ideas.md", "Board.canvas"}),
    ("pricing rating>=4", {"Projects/Pricing.md", "Projects/Launch.md"}),
    ("pricing rating<4", {"Projects/Website.md"}),  # "3" in quotes: types.json says number
    ("pricing rating:4", {"Projects/Pricing.md"}),
    ("pricing due<2026-12-01", {"Projects/Pricing.md"}),
    ("pricing due>=2027-01-15", {"Projects/Launch.md"}),  # a date-time on that day counts
    ("pricing has:due", {"Projects/Pricing.md", "Projects/Launch.md", "Projects/Odd.md"}),  # Odd's bad date: key kept
    ("pricing -has:status", {"Daily/2026-11-24.md", "Journal/Ideas.md", "Board.canvas"}),
    ("pricing reviewed:true", {"Projects/Pricing.md"}),
    ("pricing project:launch", {"Projects/Pricing.md"}),  # the link's target
    ("pricing people:bob", {"Projects/Pricing.md"}),
    ("pricing task:done", {"Projects/Pricing.md", "Projects/Website.md", "Projects/Launch.md"}),  # cancelled counts as done
    ("pricing task:open status!=draft", {"Projects/Launch.md", "Daily/2026-11-24.md"}),
    ("pricing after:2026-11-24 before:2026-11-24", {"Daily/2026-11-24.md"}),  # the daily note's date from its name
]


@pytest.mark.parametrize(("query", "expected"), CASES)
@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_each_filter_gives_the_same_notes_on_every_list(engine: Engine, query: str, expected: set[str], mode: str) -> None:
    assert notes(engine, query, mode) == expected


def test_where_conditions_and_query_filters_combine(engine: Engine) -> None:
    assert notes(engine, "pricing", where=("status=draft", "rating>=4")) == {"Projects/Pricing.md"}
    assert notes(engine, "pricing status:draft", where=("has:reviewed",)) == {"Projects/Pricing.md", "Projects/Odd.md"}


def test_an_empty_query_with_a_filter_lists_the_matching_notes(engine: Engine) -> None:
    assert notes(engine, "status:active") == {"Projects/Launch.md"}


def test_bad_values_are_reported_not_fatal(engine: Engine) -> None:
    info = engine.index_for(V).info
    details = [w.detail for w in info.warnings if w.rel_path == "Projects/Odd.md"]
    text = " ".join(details)
    assert "'lots' is not a valid number" in text
    assert "'2026-02-30' is not a valid date" in text
    assert "'maybe' is not a valid checkbox" in text
    assert "due date '2026-13-45' is not a date" in text


def test_a_canvas_is_found_by_its_cards_and_reported_when_a_card_is_missing(engine: Engine) -> None:
    resp = engine.search(SearchRequest("kayak rental", mode="keyword", k=5))
    assert resp.hits and resp.hits[0].chunk.rel_path == "Board.canvas"
    info = engine.index_for(V).info
    assert any(w.rel_path == "Board.canvas" and "Projects/Gone.md" in w.detail for w in info.warnings)
    assert any(w.rel_path == "Torn.canvas" and "JSON Canvas" in w.detail for w in info.warnings)
    assert "Board.canvas" in {b.rel_path for b in engine.links(V, "Projects/Pricing.md").backlinks}


def test_a_key_no_note_has_is_searched_as_words(engine: Engine) -> None:
    resp = engine.search(SearchRequest("venue booking:venue status:active", mode="keyword", k=5))
    assert resp.parsed is not None and [f.spelled() for f in resp.parsed.filters.where] == ["status:active"]
    assert "booking:venue" in resp.parsed.terms
    assert any("no note has a property 'booking'" in w for w in resp.warnings)
    assert {h.chunk.rel_path for h in resp.hits} <= {"Projects/Launch.md"}
    kept = engine.search(SearchRequest("pricing nosuchkey>=3", mode="keyword", k=5))  # a comparison stays a filter
    assert kept.hits == () and [f.spelled() for f in kept.parsed.filters.where] == ["nosuchkey>=3"]
