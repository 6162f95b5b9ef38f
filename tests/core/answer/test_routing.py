"""Folder routing (seed 001): the model's folders are searched first, weighed by position; failures fall back."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from core.answer import Answerer, AskRequest
from core.answer.routing import Fallback, folders_of, parse_folders, position_weight, select_folders
from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.llm import ChatMessage, LLMError
from tests.core.providers.llm.fake_server import Providers, Reply, ScriptedServer, json_reply, openai_stream, serve

REPO = Path(__file__).resolve().parents[3]


class TwoStepProvider:
    """Answers the routing prompt with `route` (or fails), then every other prompt with `answer`."""

    id = "scripted"
    model = "scripted-1"
    remote = False

    def __init__(self, route: str | None, answer: str) -> None:
        self.route, self.answer = route, answer
        self.prompts: list[str] = []

    def stream(self, messages: Sequence[ChatMessage], *, temperature: float = 0.2, max_tokens: int | None = None, cancel=None) -> Iterator[str]:  # type: ignore[no-untyped-def]
        self.prompts.append(messages[0].content)
        if "folders of a notes vault" in messages[0].content:
            if self.route is None:
                raise LLMError("connection_refused", "no server")
            yield self.route
        else:
            yield self.answer


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    eng = Engine(AppPaths(tmp_path_factory.mktemp("routing-home")), embedder_factory=None)
    eng.add_vault(REPO / "resources" / "sample-vault")
    eng.sync()
    yield eng
    eng.close()


def test_weights_fall_by_position_to_a_floor_and_inventions_are_dropped() -> None:
    assert [position_weight(i) for i in (0, 1, 2, 9, 12)] == [1.0, 0.9, 0.8, 0.1, 0.1]
    assert folders_of(["a/b/n.md", "a/m.md", "root.md"]) == ["a", "a/b"]
    assert parse_folders('Sure! ["recipes", "Nowhere", "How-to"]', ["Recipes", "How-to", "People"]) == ["Recipes", "How-to"]
    assert parse_folders("Recipes\n- People", ["Recipes", "People"]) == ["Recipes", "People"]
    assert parse_folders("Use this:\n```bash\ndocker exec -it x bash\n```", ["bash", "docker"]) == []  # code, not a choice


def test_routed_folders_are_searched_first_and_show_in_debug_and_why(engine: Engine) -> None:
    provider = TwoStepProvider('["Recipes"]', "Bench rest 20–30 minutes [1].")
    resp = Answerer(engine, provider, route_folders=True).ask(AskRequest("how long is the bench rest for the loaf"))
    routing = resp.debug["folder_routing"]
    assert routing["folders"] == ["Recipes"] and routing["weights"] == [1.0] and routing["fallback"] is None
    assert resp.sources and all(s.rel_path.startswith("Recipes/") for s in resp.sources)
    assert any(t.name.startswith("folder route: Recipes") for s in resp.sources for h in s.hits for t in h.contributions)


def test_user_folders_come_first_and_a_failing_model_falls_back_to_all_folders(engine: Engine) -> None:
    provider = TwoStepProvider(None, "Bench rest 20–30 minutes [1].")
    resp = Answerer(engine, provider, route_folders=True).ask(AskRequest("how long is the bench rest for the loaf"))
    assert resp.debug["folder_routing"]["folders"] == [] and "failed" in resp.debug["folder_routing"]["fallback"]
    assert any("folder routing not used" in w for w in resp.warnings) and resp.sources
    user_first = TwoStepProvider('["How-to"]', "ok [1].")
    resp = Answerer(engine, user_first, route_folders=True).ask(AskRequest("how long is the bench rest", folders=("Recipes",)))
    assert resp.debug["folder_routing"]["folders"][0] == "Recipes"


def test_routing_is_off_by_default(engine: Engine) -> None:
    provider = TwoStepProvider('["Recipes"]', "Bench rest 20–30 minutes [1].")
    resp = Answerer(engine, provider).ask(AskRequest("how long is the bench rest for the loaf"))
    assert "folder_routing" not in resp.debug and len(provider.prompts) == 1


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    yield from serve()


def test_the_fallback_names_its_cause_timeout_failure_or_invalid_reply(server: ScriptedServer) -> None:
    """A real OpenAI-compatible server on 127.0.0.1: each way the model's choice can be lost is told apart."""
    providers = Providers(server)
    folders = ["Recipes", "How-to", "People"]
    try:
        server.queue(Reply(pieces=openai_stream('["How-to", "Recipes"]')))
        chosen = select_folders("how do I knead", folders, ["People"], providers.openai())
        assert (chosen.folders, chosen.weights, chosen.user_count, chosen.fallback_kind) == (("People", "How-to", "Recipes"), (1.0, 0.9, 0.8), 1, None)
        assert chosen.as_debug()["chosen_by"] == ["you", "model", "model"] and chosen.reply == '["How-to", "Recipes"]'

        server.queue(Reply(pieces=openai_stream("No idea, sorry.")))
        invalid = select_folders("how do I knead", folders, [], providers.openai())
        assert invalid.all_folders and invalid.fallback_kind is Fallback.INVALID_REPLY and invalid.reply == "No idea, sorry."

        server.queue(Reply(pieces=openai_stream("late"), delay_s=1.0))
        slow = select_folders("how do I knead", folders, [], providers.openai(timeout=0.2, max_retries=0))
        assert slow.all_folders and slow.fallback_kind is Fallback.TIMEOUT and slow.fallback.startswith("the model timed out")

        server.queue(json_reply(401, {"error": {"message": "bad key"}}))
        refused = select_folders("how do I knead", folders, [], providers.openai())
        assert refused.all_folders and refused.fallback_kind is Fallback.FAILED and refused.as_debug()["searched_all_folders"]
    finally:
        providers.close()
