"""Quoted phrases match word for word, stop words included, on a small vault and on real notes."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchResponse
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.analysis import phrase_spans
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder

REAL_TIL = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "vaults" / "simonw-til"
if not REAL_TIL.is_dir():
    REAL_TIL = Path("/work/shared/data/vaults/simonw-til")

NOTES = {
    "hamlet.md": "# Hamlet\n\nTo be, or not to be: that is the question.\n",
    "shuffled.md": "# Shuffled\n\nNot to be confused: to or be, and be to or not.\n",
    "research.md": "# Research\n\nThis model is the state of the art in parsing.\n",
    "scattered.md": "# Scattered\n\nThe state and the art museum are both closed.\n",
    "band.md": "# Concerts\n\nI saw The Who live in 1979.\n",
    "question.md": "# Question\n\nWho left the door open?\n",
    "secret.md": "---\nconfidentiality: restricted\n---\n# Secret\n\nTo be or not to be, privately.\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("phrases-vault")
    _write(root, NOTES)
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(root, name="v")
    eng.sync()
    yield eng
    eng.close()


def notes(resp: SearchResponse) -> list[str]:
    return list(dict.fromkeys(h.chunk.rel_path for h in resp.hits))


def test_phrase_spans_ignore_case_punctuation_and_accents_but_not_word_order() -> None:
    assert phrase_spans("To be, or not to be: that", "to be or not to be") == [(0, 19)]
    assert phrase_spans("Not to be: to or be", "to be or not to be") == []
    assert phrase_spans("state of the ARTS", "state of the art") == [(0, 17)]  # content words keep stemming
    assert phrase_spans("the state and the art", "state of the art") == []
    assert phrase_spans("Café für alle", "cafe fur alle") == [(0, 13)]


def test_a_phrase_of_stop_words_only_finds_the_note_that_holds_it(engine: Engine) -> None:
    for mode in ("keyword", "hybrid"):
        resp = engine.search(SearchRequest('"to be or not to be"', mode=mode))
        assert notes(resp)[0] == "hamlet.md", mode
        if mode == "keyword":
            assert notes(resp) == ["hamlet.md"]  # not the note holding the same words shuffled, nor the restricted one
        assert "**To be, or not to be**" in resp.hits[0].snippet


def test_stop_words_inside_a_phrase_must_be_there(engine: Engine) -> None:
    resp = engine.search(SearchRequest('"state of the art"', mode="keyword"))
    assert notes(resp) == ["research.md"]
    assert "**state of the art**" in resp.hits[0].snippet
    assert notes(engine.search(SearchRequest('"the who"', mode="keyword"))) == ["band.md"]


def test_in_hybrid_a_note_holding_the_phrase_ranks_above_related_notes(engine: Engine) -> None:
    resp = engine.search(SearchRequest('"state of the art"', mode="hybrid", k=10))
    assert notes(resp)[0] == "research.md"
    assert len(notes(resp)) > 1  # the related notes still follow
    top = resp.hits[0]
    assert abs(sum(t.value for t in top.contributions) - top.score) < 1e-9
    resp = engine.search(SearchRequest('"the who"', mode="hybrid", k=10))
    assert notes(resp)[0] == "band.md"


def test_a_stop_word_phrase_with_other_words_ranks_by_them(engine: Engine) -> None:
    resp = engine.search(SearchRequest('"to be" question', mode="keyword"))
    assert notes(resp)[0] == "hamlet.md"  # holds both; shuffled.md holds only the phrase
    assert set(notes(resp)) == {"hamlet.md", "shuffled.md"}


def test_a_restricted_note_is_found_only_when_allowed(engine: Engine) -> None:
    from core.base.models import SearchFilters

    resp = engine.search(SearchRequest('"to be or not to be"', mode="keyword", filters=SearchFilters(allow_restricted=True)))
    assert set(notes(resp)) == {"hamlet.md", "secret.md"}


@pytest.fixture(scope="module")
def til(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    if not REAL_TIL.is_dir():
        pytest.skip("the real simonw-til vault is not here")
    # Real notes, not all 579 (indexing them all took minutes on a busy machine): every note that holds
    # "box" or "to and from" (the phrases asked for, and their words apart), and 80 others.
    root = tmp_path_factory.mktemp("til") / "simonw-til"
    notes = sorted(REAL_TIL.rglob("*.md"))
    wanted = [n for n in notes if re.search(r"\bbox\b|\bto\W+and\W+from\b", n.read_text(encoding="utf-8"), re.IGNORECASE)]
    for note in dict.fromkeys(wanted + notes[:80]):
        target = root / note.relative_to(REAL_TIL)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, target)
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=None)
    eng.add_vault(root, name="til")
    eng.sync(embed=False)
    yield eng
    eng.close()


def _holds(pattern: str, root: Path) -> set[str]:
    rx = re.compile(pattern, re.IGNORECASE)
    return {p.relative_to(root).as_posix() for p in root.rglob("*.md") if rx.search(p.read_text(encoding="utf-8"))}


def test_real_notes_stop_word_phrase_finds_every_note_that_holds_it(til: Engine) -> None:
    root = Path(til.config.vaults[0].root)
    expected = _holds(r"\bto\W+and\W+from\b", root)
    assert len(expected) >= 2
    resp = til.search(SearchRequest('"to and from"', mode="keyword", k=20, per_note_cap=1))
    assert set(notes(resp)) == expected
    assert all("**to and from**" in h.snippet.lower() for h in resp.hits)


def test_real_notes_mixed_phrase_excludes_notes_with_the_words_apart(til: Engine) -> None:
    root = Path(til.config.vaults[0].root)
    expected = _holds(r"\bout\W+of\W+the\W+box\b", root)
    words = til.search(SearchRequest("out box", mode="keyword", k=50, per_note_cap=1))
    assert set(notes(words)) - expected  # some notes hold both words, not the phrase
    resp = til.search(SearchRequest('"out of the box"', mode="keyword", k=20, per_note_cap=1))
    assert set(notes(resp)) == expected


def test_a_stop_word_phrase_is_found_in_a_vault_with_another_language(tmp_path: Path) -> None:
    # "and not" are English stop words but ordinary German-stemmed words: the German analysis of the
    # phrase has index terms, the English chunks that hold it have none; the scan must still run.
    files = {"hamlet.md": NOTES["hamlet.md"], "mixed.md": "# Mixed\n\nQuick and not dirty.\n"}
    for i in range(4):
        files[f"de{i}.md"] = f"# Notiz {i}\n\nDer Hund läuft schnell über die große Wiese und bellt laut am Morgen.\n"
    root = tmp_path / "v"
    _write(root, files)
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    try:
        eng.add_vault(root, name="v")
        eng.sync(embed=False)
        assert "de" in eng.index_for("v").keyword.languages()
        assert notes(eng.search(SearchRequest('"and not"', mode="keyword"))) == ["mixed.md"]
    finally:
        eng.close()
