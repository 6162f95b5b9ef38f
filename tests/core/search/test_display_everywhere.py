"""What people read of a search, a link and an answer shows no markdown or HTML syntax.

A real keyword index of the construct corpus (`tests/fixtures/obsidian_constructs`): the
snippets of real searches, the backlink lines of a note and an extractive answer's lines are
counted for leaks (`tests.render_leaks`), and the highlights still land on the matched words.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from tests.core.vault.test_display_text import LITERAL_IN_SOURCE as LITERAL
from tests.render_leaks import count_leaks

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "fixtures" / "obsidian_constructs"
V = "constructs"
QUERIES = ("sourdough starter", "callout", "task", "table pipe", "footnote", "embed", "comment", "code", "caption", "tip")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    vault = tmp_path_factory.mktemp("vault") / V
    shutil.copytree(CORPUS, vault)
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=None)
    eng.add_vault(vault, name=V)
    eng.sync()
    yield eng
    eng.close()


def test_snippets_of_real_searches_show_no_syntax(engine: Engine) -> None:
    snippets = [h.snippet for q in QUERIES for h in engine.search(SearchRequest(q, k=10)).hits]
    assert len(snippets) >= len(QUERIES)
    assert count_leaks(snippets, snippet=True) == {}, snippets


def test_highlights_land_on_the_matched_words_after_rendering(engine: Engine) -> None:
    hits = engine.search(SearchRequest("sourdough", k=10)).hits
    marked = {m.lower() for h in hits for m in re.findall(r"\*\*(.+?)\*\*", h.snippet)}
    assert marked == {"sourdough"}
    table = next(h for h in hits if "Feed the" in h.snippet and "·" in h.snippet)
    assert "Feed the **sourdough** · the table note" in table.snippet


def test_backlink_lines_show_no_syntax(engine: Engine) -> None:
    lines = [b.context for b in engine.links(V, "Other note.md").backlinks] + [b.context for b in engine.links(V, "Constructs.md").backlinks]
    assert len(lines) >= 3
    assert count_leaks(lines) == {}, lines
    assert "The sourdough starter lives in the other note, a sourdough sourdough note." in lines


def test_an_extractive_answer_reads_clean_and_its_quotes_stay_verbatim(engine: Engine) -> None:
    resp = Answerer(engine).ask(AskRequest("How often does the sourdough starter need feeding?"))
    assert not resp.abstained and resp.quotes
    body = resp.answer.split("\n", 1)[1]
    assert count_leaks([line.removeprefix("- ") for line in body.splitlines() if line.strip()]) == {}, resp.answer
    source = (CORPUS / "Other note.md").read_text(encoding="utf-8")
    assert all(q.text in source for q in resp.quotes if q.kind != "code")  # checked against the note as written


VAULTS = next((p / "shared/data/vaults" for p in REPO.parents if (p / "shared/data/vaults").is_dir()), Path("/nonexistent"))
REAL_QUERIES = (
    "postpone button", "callout", "urgency score", "tag recognition", "recurring tasks", "custom statuses",
    "due date", "group by", "styling css", "footnotes", "block link", "dataview", "filter by function", "table",
)


QUESTIONS = (
    "How do I postpone a task?", "What does a callout with a title look like?", "How is the urgency score calculated?",
    "How do I hide the edit button?", "Which tags does Tasks recognise?", "How do recurring tasks work?",
)


def prose_lines(answer: str) -> list[str]:
    """An answer's lines outside its fenced code (code is shown as code, and may hold anything)."""
    out, in_code = [], False
    for line in answer.splitlines()[1:]:
        if line.startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code and line.strip():
            out.append(line)
    return out


@pytest.mark.parametrize("vault", ["obsidian-tasks-docs", "obsidian-tasks-demo"])
def test_real_vault_snippets_backlink_lines_and_answers_show_no_syntax(vault: str, tmp_path: Path) -> None:
    root = VAULTS / vault
    if not root.is_dir():
        pytest.skip(f"{vault} is not here")
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    try:
        eng.add_vault(root, name=vault)
        eng.sync()
        hits = [h for q in REAL_QUERIES for h in eng.search(SearchRequest(q, k=10)).hits]
        snippets = [s for h in hits if (vault, h.chunk.rel_path) not in LITERAL for s in (h.snippet, *(m.snippet for m in h.more))]
        assert len(snippets) > 100
        assert count_leaks(snippets, snippet=True) == {}, [s for s in snippets if count_leaks([s], snippet=True)]
        notes = sorted({h.chunk.rel_path for h in hits})
        lines = [b.context for rel in notes for b in eng.links(vault, rel).backlinks if (vault, b.rel_path) not in LITERAL]
        assert len(lines) > 20
        assert count_leaks(lines) == {}, [line for line in lines if count_leaks([line])]
        answers = [Answerer(eng).ask(AskRequest(q)).answer for q in QUESTIONS]
        quoted = [line.removeprefix("- ") for answer in answers for line in prose_lines(answer)]
        assert len(quoted) >= len(QUESTIONS)
        assert count_leaks(quoted) == {}, [line for line in quoted if count_leaks([line])]
    finally:
        eng.close()
