"""A folder scope (the app's tree, `--folder`) is a hard constraint on `folder:` typed in the query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.query import narrow_folders, parse_query
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder

V = "scoped"
NOTES = {
    "Work/plan.md": "# Plan\n\nThe lantern plan for work.\n",
    "Work/Sub/deep.md": "# Deep\n\nA lantern deep inside work.\n",
    "Home/garden.md": "# Garden\n\nA lantern in the garden.\n",
}


@pytest.fixture
def engine(tmp_path: Path, cairn_home: Path) -> Iterator[Engine]:
    root = tmp_path / V
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    eng = Engine(AppPaths(cairn_home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(root, name=V)
    eng.sync()
    yield eng
    eng.close()


def _paths(engine: Engine, query: str, mode: str) -> set[str]:
    resp = engine.search(SearchRequest(query, mode=mode, filters=SearchFilters(vaults=(V,), folders=("Work",))))
    return {h.chunk.rel_path for h in resp.hits for h in (h, *h.more)}


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_typed_folder_inside_the_scope_narrows_it(engine: Engine, mode: str) -> None:
    assert _paths(engine, "lantern", mode) == {"Work/plan.md", "Work/Sub/deep.md"}
    assert _paths(engine, "lantern folder:Work/Sub", mode) == {"Work/Sub/deep.md"}


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_typed_folder_outside_the_scope_finds_nothing_and_says_why(engine: Engine, mode: str) -> None:
    resp = engine.search(SearchRequest("lantern folder:Home", mode=mode, filters=SearchFilters(vaults=(V,), folders=("Work",))))
    assert [h.chunk.rel_path for h in resp.hits] == []
    assert any("outside the scope" in w for w in resp.warnings)


def test_narrowing_rules() -> None:
    assert narrow_folders((), ("A",)) == ("A",)
    assert narrow_folders(("A",), ()) == ("A",)
    assert narrow_folders(("A",), ("a/b",)) == ("a/b",)  # folders match case-blind, as the index does
    assert narrow_folders(("A/B",), ("A",)) == ("A/B",)  # a folder around the scope keeps the scope
    assert narrow_folders(("A",), ("AB",)) is None  # a sibling with the same start is outside
    assert narrow_folders(("A",), ("A/B", "C")) == ("A/B",)


def test_without_a_scope_typed_folders_are_either_folder() -> None:
    assert parse_query("x folder:A folder:B").query.filters.folders == ("A", "B")
