"""Ask "what is open for project X?": answered from the open task lines, each cited to its line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.answer.models import AskRequest
from core.answer.pipeline import Answerer
from core.answer.task_answer import task_subject
from core.engine import Engine
from tests.helpers import structured_engine

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "structured_vault"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Path]]:
    eng, root = structured_engine(tmp_path_factory)
    yield eng, root
    eng.close()


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("What is open for project Launch?", ("launch",)),
        ("what's still left on the website", ("website",)),
        ("open tasks about pricing", ("pricing",)),
        ("How do I open the settings?", None),
        ("what are the tasks", None),
        ("how do I filter tasks by due date", None),
        ("todos for the website", ("website",)),
        ("which tasks are still open on pricing", ("pricing",)),
    ],
)
def test_which_questions_ask_for_tasks(question: str, subject: tuple[str, ...] | None) -> None:
    assert task_subject(question) == subject


def test_open_tasks_of_a_project_cited_to_their_lines(vault: tuple[Engine, Path]) -> None:
    engine, root = vault
    resp = Answerer(engine).ask(AskRequest("What is open for project Launch?", mode="keyword"))
    assert resp.answer.splitlines() == [
        "Open tasks for launch (4):",
        "- Draft the pricing page (due 2026-11-25) [1]",  # Pricing.md says project: [[Launch]]
        "- Book the venue (due 2026-12-01) [2]",
        "- Compare competitors (due 2026-12-15) [3]",
        "- Write the announcement [4]",
    ]
    for ref, quote in zip(resp.references, resp.quotes, strict=True):
        line = (root / ref.rel_path).read_bytes()[ref.start_byte : ref.end_byte].decode()
        assert line.startswith("- [") and quote.text.split(" ")[0] in line
    assert not resp.abstained


def test_a_question_no_task_matches_goes_the_usual_way(vault: tuple[Engine, Path]) -> None:
    resp = Answerer(engine := vault[0]).ask(AskRequest("what is open for the zeppelin fleet", mode="keyword"))
    assert not resp.answer.startswith("Open tasks") and engine is vault[0]


def test_a_path_prefix_scope_keeps_the_tasks_of_the_notes_under_it(vault: tuple[Engine, Path]) -> None:
    engine, _ = vault
    resp = Answerer(engine).ask(AskRequest("What is open for project Launch?", mode="keyword", path_prefixes=("Projects/Pri",)))
    assert {r.rel_path for r in resp.references} == {"Projects/Pricing.md"}
