"""Folder routing in the app: the Language model page's opt-in, the Ask tab using it, the Debug tab showing its choice.

The model is a real HTTP server on 127.0.0.1 speaking the OpenAI streaming
protocol (the shared scripted server of the provider tests), reached through
the app's own provider factory from the saved settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.answer.routing import ROUTE_PROMPT
from desktop.app_state import Scope
from desktop.controller import AppController
from desktop.dialogs.service_pages import ROUTE_NEEDS_MODEL, LanguageModelSettingsPanel
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.main_window import MainWindow
from desktop.panels.debug_ask import ROUTING_OFF
from desktop.settings import Settings, SettingsStore
from tests.core.providers.llm.fake_server import Reply, ScriptedServer, json_reply, openai_stream, serve
from tests.desktop.helpers import index_vault
from tests.desktop.test_ask import ask_and_wait

QUESTION = "how long is the bench rest for the loaf"
ANSWER = "The loaf rests on the bench for 20 to 30 minutes [1]."


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    yield from serve()


@pytest.fixture
def build(
    qtbot: Any, server: ScriptedServer, settings_file: Path, sample_vault: Path,
    make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow],
) -> Callable[[bool], MainWindow]:
    """A window on the indexed sample vault whose saved settings name the scripted server as the model."""

    def make(route_folders: bool) -> MainWindow:
        saved = Settings(llm_provider="openai", llm_model="smollm2", llm_base_url=server.url, allow_remote_llm=True, route_folders=route_folders)
        SettingsStore.at(settings_file).save(saved)
        controller = make_controller()
        assert controller.settings.route_folders is route_folders
        window = make_window(controller)
        index_vault(qtbot, controller, sample_vault)
        window.tabs.setCurrentWidget(window.ask)
        return window

    return make


def said(*texts: str) -> Reply:
    """The model streams these pieces, as an OpenAI-compatible server does."""
    return Reply(pieces=openai_stream(*texts))


def system_prompts(server: ScriptedServer) -> list[str]:
    return [r.body["messages"][0]["content"] for r in server.requests if r.body]


def test_a_routed_question_shows_the_models_folders_and_weights_in_the_debug_tab(
    qtbot: Any, build: Callable[[bool], MainWindow], server: ScriptedServer
) -> None:
    window = build(True)
    assert "folders routed" in window.ask.model_label.text()
    server.queue(said('["Recipes", ', '"How-to"]'), said(ANSWER))
    ask_and_wait(qtbot, window.ask, QUESTION, timeout_ms=15000)
    response = window.ask.response
    assert response is not None and response.error is None, window.ask.error
    assert system_prompts(server)[0] == ROUTE_PROMPT and len(server.requests) == 2  # routing, then the answer
    assert "Recipes" in server.requests[0].body["messages"][1]["content"]  # the vault's folders were offered
    assert response.sources and response.sources[0].rel_path.startswith("Recipes/")
    assert any(t.name == "folder route: Recipes ×1.0" for s in response.sources for h in s.hits for t in h.contributions)

    window.tabs.setCurrentWidget(window.debug)
    title, rows, notes = window.debug.routing_shown()
    assert title == "Folder routing: Recipes ×1.0, How-to ×0.9"
    assert rows == [("Recipes", "1", "1.0", "chosen by the model"), ("How-to", "2", "0.9", "chosen by the model")]
    assert not any(n.startswith("fallback") for n in notes)
    assert any(n.startswith("model's reply: [\"Recipes\"") for n in notes) and any(n.startswith("routing took") for n in notes)
    top = window.debug.tree.topLevelItem(0)
    assert top is not None and top.text(0) == f"Question: “{QUESTION}”" and top.isExpanded()  # the newest on top
    assert '"folder_routing"' in window.debug.as_json() and '"How-to"' in window.debug.as_json()


def test_an_invalid_reply_keeps_the_users_folder_first_and_says_why_the_model_was_not_used(
    qtbot: Any, build: Callable[[bool], MainWindow], server: ScriptedServer
) -> None:
    window = build(True)
    window.controller.set_scope(Scope(window.controller.vaults[0].name, "Recipes"))  # the user's folder
    server.queue(said("I think the loaf notes are in the kitchen."), said(ANSWER))
    ask_and_wait(qtbot, window.ask, QUESTION, timeout_ms=15000)
    window.tabs.setCurrentWidget(window.debug)
    title, rows, notes = window.debug.routing_shown()
    assert title == "Folder routing: only your folders (Recipes ×1.0): the model's reply named no folder of the vault"
    assert rows == [("Recipes", "1", "1.0", "chosen by you")]
    assert "searched: only your folders" in notes
    assert "model's reply: I think the loaf notes are in the kitchen." in notes


def test_a_failing_model_falls_back_to_all_folders_and_the_debug_tab_says_so(qtbot: Any, build: Callable[[bool], MainWindow], server: ScriptedServer) -> None:
    window = build(True)
    server.queue(json_reply(401, {"error": {"message": "bad key"}}), said(ANSWER))
    ask_and_wait(qtbot, window.ask, QUESTION, timeout_ms=15000)
    response = window.ask.response
    assert response is not None and response.sources  # the question was still answered, from all folders
    assert any("folder routing not used" in w for w in response.warnings)
    window.tabs.setCurrentWidget(window.debug)
    title, rows, notes = window.debug.routing_shown()
    assert title == "Folder routing fell back to all folders: the model failed"
    assert rows == [] and "searched: all folders" in notes
    assert any(n.startswith("fallback: the model failed: ") for n in notes)


def test_with_routing_off_no_routing_call_is_made_and_the_debug_tab_says_it_is_off(
    qtbot: Any, build: Callable[[bool], MainWindow], server: ScriptedServer
) -> None:
    window = build(False)
    assert "folders routed" not in window.ask.model_label.text()
    server.queue(said(ANSWER))
    ask_and_wait(qtbot, window.ask, QUESTION, timeout_ms=15000)
    assert window.ask.response is not None and window.ask.error is None
    assert len(server.requests) == 1 and ROUTE_PROMPT not in system_prompts(server)
    assert "folder_routing" not in window.ask.response.debug
    window.tabs.setCurrentWidget(window.debug)
    assert window.debug.routing_shown()[0] == ROUTING_OFF


def test_the_routing_setting_needs_a_model_and_round_trips_through_the_dialog(
    qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path
) -> None:
    controller = make_controller()
    assert controller.settings.route_folders is False  # off by default
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(LanguageModelSettingsPanel)
    assert isinstance(page, LanguageModelSettingsPanel)
    assert not page.route.isEnabled() and not page.route.isChecked()
    assert page.route_explain.text() == ROUTE_NEEDS_MODEL
    page.provider.setCurrentIndex(page.provider.findData("openai"))
    assert page.route.isEnabled() and "Debug tab" in page.route_explain.text()
    page.route.setChecked(True)
    dialog.accept()
    assert controller.settings.route_folders is True
    assert SettingsStore.at(settings_file).load().route_folders is True
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    reopened = again.page(LanguageModelSettingsPanel)
    assert isinstance(reopened, LanguageModelSettingsPanel) and reopened.route.isChecked()
    reopened.route.setChecked(False)
    again.accept()
    assert SettingsStore.at(settings_file).load() == replace(controller.settings, route_folders=False)
