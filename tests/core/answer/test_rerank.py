"""The opt-in LLM rerank of the top 10, against a real HTTP server on 127.0.0.1 playing the model."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from core.answer.rerank import RerankStatus, parse_ranking, rerank
from core.base.models import Hit, SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.llm import OpenAIChat
from core.search.search import SearchRequest
from tests.core.providers.llm.fake_server import Reply, ScriptedServer, json_reply, openai_stream, serve

NOTES = {f"n{i}.md": f"# Kettle note {i}\n\nThe kettle {'boils ' * (6 - i)}water for tea number {i}.\n" for i in range(1, 6)}
NOTES["private.md"] = "---\nconfidentiality: restricted\n---\n# Private kettle\n\nMy kettle boils boils boils boils boils boils boils water.\n"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("kettles")
    for rel, text in NOTES.items():
        (root / rel).write_text(text, encoding="utf-8")
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=None)
    eng.add_vault(root, name="v")
    eng.sync(embed=False)
    yield eng
    eng.close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    yield from serve()


@pytest.fixture
def model(server: ScriptedServer) -> Iterator[OpenAIChat]:
    chat = OpenAIChat(server.url, "smollm2", max_retries=0)
    yield chat
    chat.close()


def hits(engine: Engine, *, restricted: bool = False) -> tuple[Hit, ...]:
    filters = SearchFilters(allow_restricted=restricted)
    return engine.search(SearchRequest("kettle boils", mode="keyword", k=10, filters=filters)).hits


def paths(hs: tuple[Hit, ...]) -> list[str]:
    return [h.chunk.rel_path for h in hs]


def test_the_models_ranking_reorders_the_hits_with_a_named_term(engine: Engine, server: ScriptedServer, model: OpenAIChat) -> None:
    fused = hits(engine)
    assert paths(fused) == ["n1.md", "n2.md", "n3.md", "n4.md", "n5.md"]
    server.queue(Reply(pieces=openai_stream("3, ", "1, 5")))
    result = rerank("kettle boils", fused, model)
    assert result.status == RerankStatus.RERANKED
    assert paths(result.hits) == ["n3.md", "n1.md", "n5.md", "n2.md", "n4.md"]  # left-out passages follow in fused order
    first = result.hits[0]
    assert first.contributions[-1].name.startswith("LLM rerank: 3 → 1, ") and first.contributions[-1].name.endswith(" ms")
    for h in result.hits:
        assert abs(sum(t.value for t in h.contributions) - h.score) < 1e-9
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    prompt = server.requests[0].body["messages"][1]["content"]
    assert "Search query: kettle boils" in prompt and "[5] Kettle note 5" in prompt


def test_a_restricted_note_is_never_sent_and_keeps_its_place(engine: Engine, server: ScriptedServer, model: OpenAIChat) -> None:
    fused = hits(engine, restricted=True)
    assert paths(fused)[0] == "private.md"
    server.queue(Reply(pieces=openai_stream("5,4,3,2,1")))
    result = rerank("kettle boils", fused, model)
    body = str(server.requests[0].body)
    assert "Private kettle" not in body and "My kettle" not in body
    assert paths(result.hits) == ["private.md", "n5.md", "n4.md", "n3.md", "n2.md", "n1.md"]


@pytest.mark.parametrize(
    ("reply", "status", "says"),
    [
        (json_reply(500, {"error": "boom"}), RerankStatus.FAILED, "LLM rerank failed"),
        (Reply(pieces=openai_stream("I cannot rank these.")), RerankStatus.FAILED, "held no ranking"),
    ],
)
def test_on_failure_the_fused_order_stays_and_says_so(
    engine: Engine, server: ScriptedServer, model: OpenAIChat, reply: Reply, status: RerankStatus, says: str
) -> None:
    fused = hits(engine)
    server.queue(reply)
    result = rerank("kettle boils", fused, model)
    assert result.status == status and says in result.message and "fused order" in result.message
    assert result.hits == fused


def test_a_slow_model_hits_the_time_limit(engine: Engine, server: ScriptedServer, model: OpenAIChat) -> None:
    fused = hits(engine)
    server.queue(Reply(pieces=openai_stream(*["1, "] * 40), gap_s=0.1))
    t0 = time.perf_counter()
    result = rerank("kettle boils", fused, model, timeout_s=0.5)
    assert time.perf_counter() - t0 < 3.0
    assert result.status == RerankStatus.TIMED_OUT and result.hits == fused


def test_a_new_query_cancels_the_rerank(engine: Engine, server: ScriptedServer, model: OpenAIChat) -> None:
    fused = hits(engine)
    server.queue(Reply(pieces=openai_stream(*["1, "] * 40), gap_s=0.1))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    result = rerank("kettle boils", fused, model, cancel=cancel)
    assert result.status == RerankStatus.CANCELLED and result.hits == fused
    assert server.client_hung_up.wait(5)


def test_the_ranking_parser_ignores_repeats_and_strays() -> None:
    assert parse_ranking("2, 2, 9, 1", 3) == [1, 0, 2]
    assert parse_ranking("Passage [3] then [1]", 3) == [2, 0, 1]
    assert parse_ranking("none", 3) is None
