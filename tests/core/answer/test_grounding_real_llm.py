"""Grounded answers with a real small model: llama.cpp serving SmolLM2-135M (it ignores instructions often).

Whatever the model writes, what is shown as the answer is grounded: every citation left
in it resolves to a retrieved source that supports its claim, or the model's text is
folded away as unverified and the notes' own passages are shown. The context sent keeps
code blocks intact. Skipped only when llama_cpp is not installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest
from core.answer.extractive import LABEL
from core.answer.grounding import supports
from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.llm import OpenAIChat
from tests.core.providers.llm.test_real_server import ALIAS, llama_server  # noqa: F401 - the server fixture

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    eng = Engine(AppPaths(tmp_path_factory.mktemp("grounding-home")), embedder_factory=None)
    eng.add_vault(REPO / "resources" / "sample-vault")
    eng.sync()
    yield eng
    eng.close()


@pytest.mark.parametrize("question", ["How do I record a flame graph with py-spy?"])
def test_what_a_small_real_model_writes_is_shown_only_when_grounded(engine: Engine, llama_server: str, question: str) -> None:  # noqa: F811
    with OpenAIChat(llama_server, ALIAS, timeout=120) as chat:
        resp = Answerer(engine, chat).ask(AskRequest(question))
    assert not resp.abstained and resp.error is None
    by_number = {s.number: s for s in resp.sources}
    assert resp.references and all(r.number in by_number for r in resp.references)
    if resp.unverified:
        assert resp.answer.startswith(LABEL) and resp.quotes
        assert any("cited none" in w for w in resp.warnings)
    else:
        for ref in resp.references:
            assert f"[{ref.number}]" in resp.answer
            assert supports(resp.answer, by_number[ref.number])
    if "py-spy" in question:
        sent = resp.context_sent[-1]["content"]
        assert "```" in sent and "py-spy record" in sent  # code blocks reach the model intact
