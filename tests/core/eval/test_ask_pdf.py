"""Ask evaluation on a PDF: quotes are checked against the re-extracted pages, not the file's bytes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest
from core.base.paths import AppPaths
from core.engine import Engine
from core.eval.ask_eval import quote_in_section, run_ask_cases
from core.eval.golden import AskCase
from tests.pdf_writer import write_pdf

PAGES = [
    ["Marsh Field Guide", "Chapter 1 Birds", "The grey heron waits motionless in the shallows for fish."],
    ["Marsh Field Guide", "Bitterns boom at night from the reed beds in early spring."],
    ["Marsh Field Guide", "Chapter 2 Fish", "Tench feed on the muddy bottom in warm summer water."],
]
OUTLINE = [(0, "Chapter 1 Birds", 0), (0, "Chapter 2 Fish", 2)]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    root = tmp_path / "vault"
    write_pdf(root / "guides" / "marsh.pdf", PAGES, title="Marsh Field Guide", outline=OUTLINE)
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(root, name="v")
    eng.sync(["v"], embed=False)
    yield eng
    eng.close()


def test_an_answer_from_a_pdf_page_quotes_inside_its_section(engine: Engine) -> None:
    case = AskCase(
        id="bittern",
        question="when do bitterns boom from the reed beds",
        expected_sources=("guides/marsh.pdf",),
        expected_answer=("at night",),
    )
    report = run_ask_cases(Answerer(engine), [case], vault="v")
    (result,) = report.cases
    assert result.cited == ("guides/marsh.pdf",) and result.answer_contains_expected
    assert result.quotes > 0 and result.quotes_in_section == result.quotes, result.problems


def test_a_pdf_quote_labelled_with_the_wrong_outline_heading_is_caught(engine: Engine) -> None:
    resp = Answerer(engine).ask(AskRequest("where do tench feed", vaults=("v",)))
    quote = next(q for q in resp.quotes if q.rel_path == "guides/marsh.pdf")
    root = Path(engine.vault("v").root)
    assert quote.heading_path == "Chapter 2 Fish"
    assert quote_in_section(quote, root) is None
    assert "sits under 'Chapter 2 Fish'" in (quote_in_section(replace(quote, heading_path="Chapter 1 Birds"), root) or "")
