"""Folders and Dendron-style dotted names count as title words (the keyword index's `names` field)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.index.keyword_schema import name_words
from core.search.search import SearchRequest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dendron_names"


def test_name_words_are_the_folders_and_a_dotted_names_parts() -> None:
    assert name_words("Queries/Global Query.md") == "Queries"
    assert name_words("lang.rust.ownership.md") == "lang rust ownership"
    assert name_words("notes/lang.rust.md") == "notes lang rust"
    assert name_words("Introduction.md") == ""  # a plain name at the root: its title says it all


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    eng = Engine(AppPaths(tmp_path_factory.mktemp("names-home")))
    eng.add_vault(FIXTURE, name="dendron")
    eng.sync(["dendron"], embed=False)
    yield eng
    eng.close()


def _first(engine: Engine, query: str) -> str:
    hits = engine.search(SearchRequest(query, mode="keyword", k=3)).hits
    return hits[0].chunk.rel_path if hits else ""


def test_a_word_of_a_dotted_name_finds_the_note(engine: Engine) -> None:
    # The body never says "rust" and the title is "Moving values": only the name's hierarchy does.
    assert _first(engine, "rust") == "lang.rust.ownership.md"
    assert _first(engine, "python") == "lang.python.lists.md"


def test_a_folder_name_finds_the_notes_inside_it(engine: Engine) -> None:
    assert _first(engine, "recipes") == "Recipes/Bread.md"


def test_the_shown_title_is_still_the_notes_own(engine: Engine) -> None:
    hits = engine.search(SearchRequest("rust", mode="keyword", k=1)).hits
    assert hits[0].title == "Moving values"
