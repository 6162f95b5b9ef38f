"""`Engine.links`: backlinks with their lines, unlinked mentions, related notes with reasons."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.errors import UsageError
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.related import LINK_BOOST, TAG_BOOST
from tests.helpers import BagOfWordsEmbedder, copy_link_vault

V = "link_vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_link_vault(tmp_path)


@pytest.fixture
def engine(vault: Path, cairn_home: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths(cairn_home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(vault, name=V)
    eng.sync()
    yield eng
    eng.close()


def test_backlinks_carry_the_linking_line_once_per_line(engine: Engine) -> None:
    nl = engine.links(V, "Recipes.md")
    rows = [(b.rel_path, b.line) for b in nl.backlinks]
    assert rows == [("café.md", 3), ("Home.md", 8), ("Home.md", 9), ("Home.md", 13)]
    assert nl.backlinks[1].context.startswith("Soup is in Recipes > Soup;")  # the line as read, as Obsidian shows it


def test_unlinked_mentions_find_the_title_and_aliases_but_not_linking_notes(engine: Engine) -> None:
    recipes = engine.links(V, "Recipes.md")
    assert {m.rel_path for m in recipes.mentions} == {"Journal/2024-01-01.md", "Projects/My Notes.md", "Projects/Plan.md"}
    journal = next(m for m in recipes.mentions if m.rel_path == "Journal/2024-01-01.md")
    assert journal.line == 3 and "my recipes today" in journal.context
    notes = engine.links(V, "Projects/My Notes.md")  # "Notebook" is an alias
    assert [m.rel_path for m in notes.mentions] == ["Journal/2024-01-01.md"]


def test_a_note_can_be_named_the_way_a_link_names_it(engine: Engine) -> None:
    assert engine.links(V, "MN").rel_path == "Projects/My Notes.md"
    assert engine.links(V, "recipes").rel_path == "Recipes.md"
    with pytest.raises(UsageError):
        engine.links(V, "Nowhere")


def test_related_notes_say_why_links_tags_and_similarity(engine: Engine) -> None:
    nl = engine.links(V, "Projects/My Notes.md", k=10)
    by_path = {r.rel_path: r for r in nl.related}
    home = by_path["Home.md"]
    assert "links here" in home.reasons and "shares tags index" in home.reasons
    assert any(r.startswith("similar: ") for r in home.reasons)
    similar = float(next(r for r in home.reasons if r.startswith("similar: ")).split(": ")[1])
    assert home.score == pytest.approx(similar + LINK_BOOST + TAG_BOOST, abs=0.006)  # each reason is a named nudge
    assert nl.semantic_note is None
    assert [r.score for r in nl.related] == sorted((r.score for r in nl.related), reverse=True)


def test_without_embeddings_related_notes_come_from_links_and_tags(vault: Path, cairn_home: Path) -> None:
    eng = Engine(AppPaths(cairn_home), embedder_factory=None)
    try:
        eng.add_vault(vault, name=V)
        eng.sync(embed=False)
        nl = eng.links(V, "Recipes.md")
        assert nl.semantic_note and "links, tags and shared words" in nl.semantic_note
        assert {r.rel_path for r in nl.related if "links here" in r.reasons} == {"Home.md", "café.md"}
    finally:
        eng.close()


def test_restricted_notes_are_left_out_unless_allowed(engine: Engine, vault: Path) -> None:
    (vault / "Secret.md").write_text("---\nconfidentiality: restricted\n---\n# Secret\n\nThe [[Recipes]] secret.\n")
    engine.update_notes(V, ["Secret.md"])
    assert "Secret.md" in {b.rel_path for b in engine.links(V, "Recipes.md").backlinks}
    hidden = engine.links(V, "Recipes.md", allow_restricted=False)
    assert "Secret.md" not in {b.rel_path for b in hidden.backlinks} | {r.rel_path for r in hidden.related}
    with pytest.raises(UsageError, match="restricted"):
        engine.links(V, "Secret.md", allow_restricted=False)


def test_a_name_of_stop_words_only_is_not_looked_for_as_a_mention(tmp_path: Path, cairn_home: Path) -> None:
    """"That an" stands in ordinary prose everywhere: what it finds are not mentions, and finding them
    means reading every chunk's text (seconds of Python at 10k notes, starving the UI thread)."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "That an.md").write_text("A note with an unlucky name.\n", encoding="utf-8")
    (vault / "Fruit.md").write_text("# Fruit\n\nWe know that an apple a day helps.\n", encoding="utf-8")
    (vault / "Pears.md").write_text("# Pears\n\nNot fruit salad: pears alone.\n", encoding="utf-8")
    eng = Engine(AppPaths(cairn_home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    try:
        eng.add_vault(vault, name="v")
        eng.sync()
        assert eng.links("v", "That an.md").mentions == ()
        assert [m.rel_path for m in eng.links("v", "Fruit.md").mentions] == ["Pears.md"]  # a name with a real word still is
    finally:
        eng.close()
