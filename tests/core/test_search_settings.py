"""The user's search settings reach every search: app search, CLI, MCP, Ask (all three doors) and eval.

`Engine.search` is the one place that fills a request's ranking settings from the
config; these tests drive each caller for real and record what the engine ran with.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from core.answer.models import AskRequest
from core.answer.pipeline import Answerer
from core.base.models import SearchResponse, SearchSettings
from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine
from core.eval.golden import load_golden
from core.eval.runner import run_golden
from core.mcp_server import build_server
from core.search.search import SearchRequest

REPO = Path(__file__).resolve().parents[2]
# Nothing like the defaults (default, 3, 100, 60), so a forgotten setting shows.
USER = SearchSettings(profile="keyword-heavy", per_note_cap=2, top_n=40, rrf_k=7)


@pytest.fixture
def engine(cairn_home: Path, sample_vault: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(sample_vault, name="sample")
    eng.sync(embed=False)
    eng.update_config(replace(eng.config, profile=USER.profile, per_note_cap=USER.per_note_cap, top_n=USER.top_n, rrf_k=USER.rrf_k))
    yield eng
    eng.close()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[SearchSettings]:
    """The settings of every search any engine in this process runs (the real search runs)."""
    ran: list[SearchSettings] = []
    real = Engine.search

    def recording(self: Engine, request: SearchRequest) -> SearchResponse:
        resp = real(self, request)
        ran.append(resp.settings)
        return resp

    monkeypatch.setattr(Engine, "search", recording)
    return ran


def test_a_request_without_settings_runs_with_the_users(engine: Engine) -> None:
    resp = engine.search(SearchRequest("sourdough starter", mode="keyword", k=10))
    assert resp.settings == USER
    assert resp.profile == "keyword-heavy"
    notes = [h.chunk.rel_path for h in resp.hits]
    assert max(notes.count(n) for n in notes) <= 2 < len(notes)  # per-note cap 2


def test_a_setting_given_by_the_caller_wins_over_the_config(engine: Engine) -> None:
    resp = engine.search(SearchRequest("sourdough", mode="keyword", profile="recent", per_note_cap=0))
    assert resp.settings == replace(USER, profile="recent", per_note_cap=0)


def test_ask_in_the_app_and_in_mcp_uses_the_users_settings(engine: Engine, seen: list[SearchSettings]) -> None:
    resp = Answerer(engine).ask(AskRequest("How do I feed a sourdough starter?"))
    assert resp.debug["search_settings"] == {"profile": "keyword-heavy", "per_note_cap": 2, "top_n": 40, "rrf_k": 7, "title_boost": 0.005}

    server = build_server(lambda: engine)
    asyncio.run(server.call_tool("ask_notes", {"question": "How do I feed a sourdough starter?"}))
    asyncio.run(server.call_tool("search_notes", {"query": "sourdough starter", "mode": "keyword"}))
    assert seen == [USER, USER, USER]


def test_cli_search_and_ask_use_the_users_settings(engine: Engine, seen: list[SearchSettings], capsys: pytest.CaptureFixture[str]) -> None:
    engine.close()  # the CLI opens its own engine on the same data folder
    assert main(["search", "sourdough starter", "--mode", "keyword", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"] == {"profile": "keyword-heavy", "per_note_cap": 2, "top_n": 40, "rrf_k": 7, "title_boost": 0.005}
    assert main(["ask", "How do I feed a sourdough starter?", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["debug"]["search_settings"]["rrf_k"] == 7
    assert main(["search", "sourdough", "--mode", "keyword", "--profile", "recent", "--json"]) == 0
    assert seen == [USER, USER, replace(USER, profile="recent")]


def test_eval_ranks_with_the_users_settings_one_passage_per_note(engine: Engine, seen: list[SearchSettings]) -> None:
    golden = load_golden(REPO / "tests" / "golden" / "sample.yaml")
    run_golden(engine, golden, mode="keyword", k=10)
    # eval grades notes, so it asks for one passage per note and a candidate list at least as deep as its cut-off
    assert seen and set(seen) == {replace(USER, per_note_cap=1)}
