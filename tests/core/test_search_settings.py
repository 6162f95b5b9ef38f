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
from core.base.models import Fusion, SearchResponse, SearchSettings
from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine
from core.eval.golden import load_golden
from core.eval.runner import run_golden
from core.mcp_server import build_server
from core.search.profiles import fusion_text
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder

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


# The user's settings as an answer's debug and `cairn search --json` report them.
USER_AS_REPORTED = {
    "profile": "keyword-heavy",
    "per_note_cap": 2,
    "top_n": 40,
    "rrf_k": 7,
    "title_boost": 0.005,
    "fusion": "blend",
    "keyword_share": None,
}


def test_ask_in_the_app_and_in_mcp_uses_the_users_settings(engine: Engine, seen: list[SearchSettings]) -> None:
    resp = Answerer(engine).ask(AskRequest("How do I feed a sourdough starter?"))
    assert resp.debug["search_settings"] == USER_AS_REPORTED

    server = build_server(lambda: engine)
    asyncio.run(server.call_tool("ask_notes", {"question": "How do I feed a sourdough starter?"}))
    asyncio.run(server.call_tool("search_notes", {"query": "sourdough starter", "mode": "keyword"}))
    assert seen == [USER, USER, USER]


def test_cli_search_and_ask_use_the_users_settings(engine: Engine, seen: list[SearchSettings], capsys: pytest.CaptureFixture[str]) -> None:
    engine.close()  # the CLI opens its own engine on the same data folder
    assert main(["search", "sourdough starter", "--mode", "keyword", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"] == USER_AS_REPORTED
    assert main(["ask", "How do I feed a sourdough starter?", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["debug"]["search_settings"]["rrf_k"] == 7
    assert main(["search", "sourdough", "--mode", "keyword", "--profile", "recent", "--json"]) == 0
    assert seen == [USER, USER, replace(USER, profile="recent")]


def test_eval_ranks_with_the_users_settings_one_passage_per_note(engine: Engine, seen: list[SearchSettings]) -> None:
    golden = load_golden(REPO / "tests" / "golden" / "sample.yaml")
    run_golden(engine, golden, mode="keyword", k=10)
    # eval grades notes, so it asks for one passage per note and a candidate list at least as deep as its cut-off
    assert seen and set(seen) == {replace(USER, per_note_cap=1)}


# -- fusion: each setting changes the hybrid ranking, from the config and from the caller --------------------


@pytest.fixture
def hybrid(cairn_home: Path, sample_vault: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths.from_env(), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(sample_vault, name="sample")
    eng.sync()
    yield eng
    eng.close()


def _order(resp: SearchResponse) -> list[str]:
    return [f"{h.chunk.rel_path}#{h.chunk.ordinal}" for h in resp.hits]


def test_the_fusion_setting_switches_blend_and_reciprocal_rank(hybrid: Engine) -> None:
    query = "how long should dough rest"
    blend = hybrid.search(SearchRequest(query, k=10))
    assert blend.settings.fusion == Fusion.BLEND and fusion_text(blend.settings, blend.mode) == "score blend: keyword 50%, meaning 50%"
    assert any(t.name.startswith("keyword ") and "× weight 0.5" in t.name for t in blend.hits[0].contributions)
    hybrid.update_config(replace(hybrid.config, fusion="rrf", rrf_k=5))
    rrf = hybrid.search(SearchRequest(query, k=10))
    assert rrf.settings.fusion == Fusion.RRF and fusion_text(rrf.settings, rrf.mode) == "reciprocal rank fusion (k = 5)"
    assert all(t.name.startswith("rrf_") for t in rrf.hits[0].contributions if t.name.startswith(("rrf", "keyword", "meaning")))
    assert _order(rrf) != _order(blend)
    flat = hybrid.search(SearchRequest(query, k=10, rrf_k=500))  # RRF k now means something: it flattens ranks
    assert flat.hits[0].score < rrf.hits[0].score and flat.settings.rrf_k == 500


def test_the_keyword_weight_moves_the_blend_between_the_lists(hybrid: Engine) -> None:
    query = "how long should dough rest"
    words = hybrid.search(SearchRequest(query, k=10, keyword_share=1.0))
    meaning = hybrid.search(SearchRequest(query, k=10, keyword_share=0.0))
    assert words.hits[0].bm25 is not None and words.hits[0].bm25.rank == 1
    assert _order(words) != _order(meaning)
    assert fusion_text(meaning.settings, meaning.mode) == "score blend: keyword 0%, meaning 100%"
    hybrid.update_config(replace(hybrid.config, keyword_share=1.0))
    assert _order(hybrid.search(SearchRequest(query, k=10))) == _order(words)  # the config's weight, when the caller sets none


def test_cli_and_mcp_choose_the_fusion(engine: Engine, seen: list[SearchSettings], capsys: pytest.CaptureFixture[str]) -> None:
    server = build_server(lambda: engine)
    asyncio.run(server.call_tool("search_notes", {"query": "sourdough starter", "fusion": "rrf", "keyword_weight": 0.3}))
    assert seen[-1] == replace(USER, fusion=Fusion.RRF, keyword_share=0.3)
    engine.close()
    assert main(["search", "sourdough starter", "--fusion", "blend", "--keyword-weight", "0.8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["fusion"] == "blend" and out["settings"]["keyword_share"] == 0.8
    assert main(["search", "sourdough", "--keyword-weight", "2"]) != 0  # out of range: a clear usage error
    assert "between 0 and 1" in capsys.readouterr().err
