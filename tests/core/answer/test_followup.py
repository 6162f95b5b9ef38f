"""Follow-up questions are rewritten to stand alone, offline or by the model, and shown as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest, Turn
from core.answer.followup import carry_over, is_follow_up, rewrite
from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.llm import LLMError
from tests.helpers import ScriptedProvider

REPO = Path(__file__).resolve().parents[3]
FIRST = Turn("How long is the bench rest when shaping the sourdough?", "How long is the bench rest when shaping the sourdough?", "20–30 minutes [1]")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    eng = Engine(AppPaths(tmp_path_factory.mktemp("followup-home")), embedder_factory=None)
    eng.add_vault(REPO / "resources" / "sample-vault")
    eng.sync()
    yield eng
    eng.close()


def test_a_question_that_stands_alone_is_left_as_it_is() -> None:
    assert not is_follow_up("How do I back up the NAS with restic?", [FIRST])
    assert rewrite("How do I back up the NAS with restic?", [FIRST]) == "How do I back up the NAS with restic?"
    assert not is_follow_up("and the cold retard?", [])  # nothing to lean on


def test_offline_a_follow_up_carries_the_previous_key_words() -> None:
    standalone = carry_over("and the cold retard?", [FIRST])
    assert standalone.endswith("and the cold retard?")
    assert "sourdough" in standalone and "bench" in standalone and "How" not in standalone


def test_each_turn_retrieves_afresh_with_the_rewritten_question(engine: Engine) -> None:
    resp = Answerer(engine).ask(AskRequest("and how long in the fridge?", history=(FIRST,)))
    assert resp.standalone_question and "sourdough" in resp.standalone_question
    assert not resp.abstained and any(q.rel_path == "Recipes/Sourdough loaf.md" for q in resp.quotes)


def test_with_a_model_the_model_rewrites_and_a_rambling_model_falls_back() -> None:
    good = ScriptedProvider(["How long should the sourdough cold retard last?"])
    assert rewrite("and the cold retard?", [FIRST], good) == "How long should the sourdough cold retard last?"
    assert "sourdough" in str(good.calls[0][-1].content)  # type: ignore[attr-defined]
    rambling = ScriptedProvider(["word " * 100])
    assert rewrite("and the cold retard?", [FIRST], rambling).endswith("and the cold retard?")
    failing = ScriptedProvider([], fail_with=LLMError("connection_refused", "no server"))
    assert "sourdough" in rewrite("and the cold retard?", [FIRST], failing)
