"""The opt-in LLM rerank in the app: fused results at once, the model's order when it arrives, never blocking."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.providers.llm import OpenAIChat
from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.core.providers.llm.fake_server import Reply, ScriptedServer, json_reply, openai_stream, serve
from tests.desktop.helpers import index_vault, search_and_wait


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    yield from serve()


@pytest.fixture
def window(
    qtbot: Any, server: ScriptedServer, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> MainWindow:
    controller = make_controller(chat_provider_factory=lambda settings: OpenAIChat(server.url, "smollm2", max_retries=0))
    win = make_window(controller)
    index_vault(qtbot, controller, sample_vault)
    controller.settings = replace(controller.settings, default_mode="keyword", llm_provider="openai", llm_rerank=True)
    return win


def _paths(controller: AppController) -> list[str]:
    assert controller.response is not None
    return [h.chunk.rel_path for h in controller.response.hits]


def test_results_show_at_once_then_in_the_models_order(qtbot: Any, window: MainWindow, server: ScriptedServer) -> None:
    controller = window.controller
    messages: list[str] = []
    controller.message.connect(messages.append)
    server.queue(Reply(pieces=openai_stream("3, 1, 2"), delay_s=0.5))  # the model takes its time
    search_and_wait(qtbot, window, "sourdough")
    fused = _paths(controller)
    assert len(fused) >= 3 and not any("LLM rerank" in t.name for t in controller.response.hits[0].contributions)
    qtbot.waitUntil(lambda: any("LLM rerank" in t.name for t in controller.response.hits[0].contributions), timeout=10000)
    assert _paths(controller)[:3] == [fused[2], fused[0], fused[1]]
    assert window.results.model.hit(0).chunk.rel_path == fused[2]  # the list shows the new order
    assert any(m.startswith("Re-ranked by the language model in") for m in messages)
    window.tabs.setCurrentWidget(window.why)
    controller.select_hit(controller.response.hits[0])
    assert any(name.startswith("LLM rerank: 3 → 1, ") for name, _ in window.why.term_values())


def test_a_failing_model_keeps_the_fused_order_and_says_so(qtbot: Any, window: MainWindow, server: ScriptedServer) -> None:
    controller = window.controller
    messages: list[str] = []
    controller.message.connect(messages.append)
    server.queue(json_reply(500, {"error": "boom"}))
    search_and_wait(qtbot, window, "sourdough")
    fused = _paths(controller)
    qtbot.waitUntil(lambda: any("showing the fused order" in m for m in messages), timeout=10000)
    assert _paths(controller) == fused


def test_a_new_query_cancels_the_running_rerank(qtbot: Any, window: MainWindow, server: ScriptedServer) -> None:
    controller = window.controller
    server.queue(Reply(pieces=openai_stream(*["2, "] * 60), gap_s=0.1), Reply(pieces=openai_stream("2, 1")))
    search_and_wait(qtbot, window, "sourdough")
    qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=5000)
    search_and_wait(qtbot, window, "bread")
    assert server.client_hung_up.wait(5)  # the first rerank stopped reading
    qtbot.waitUntil(lambda: any("LLM rerank" in t.name for t in controller.response.hits[0].contributions), timeout=10000)
    assert controller.response.query == "bread"


def test_off_by_default(qtbot: Any, window: MainWindow, server: ScriptedServer) -> None:
    controller = window.controller
    controller.settings = replace(controller.settings, llm_rerank=False)
    search_and_wait(qtbot, window, "sourdough")
    qtbot.wait(300)
    assert server.requests == []
