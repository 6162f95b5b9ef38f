"""Properties and tasks through the CLI (`--where`, `cairn properties`, `cairn tasks`) and MCP.

The hand-written tests/fixtures/structured_vault, and the real obsidian-tasks-demo vault
(~940 task lines in the Tasks plugin's format) when ../shared/data is present.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "structured_vault"
REPO = Path(__file__).resolve().parents[2]
VAULTS = next((p for d in (REPO.parent, REPO.parent.parent) if (p := d / "shared" / "data" / "vaults").is_dir()), REPO / "missing")
DEMO = VAULTS / "obsidian-tasks-demo"


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def indexed(tmp_path: Path, cairn_home: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "structured"
    shutil.copytree(FIXTURE, root)
    assert main(["index", "--vault", str(root), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    return root


def test_search_where_conditions(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = cli_json(capsys, "search", "pricing", "--mode", "keyword", "--where", "status=draft", "--where", "rating>=4")
    assert {h["rel_path"] for h in payload["hits"]} == {"Projects/Pricing.md"}


def test_a_bad_where_is_a_usage_error(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "pricing", "--where", "rating~4"]) == 2
    assert "--where" in capsys.readouterr().err


def test_properties_lists_keys_types_and_values(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = {p["key"]: p for p in cli_json(capsys, "properties")}
    assert keys["status"]["notes"] == 4
    assert {t["type"] for t in keys["status"]["types"]} == {"text", "list"}  # Odd.md holds a list
    (rating,) = cli_json(capsys, "properties", "rating")
    assert {v["value"]: v["notes"] for v in rating["values"]} == {"3": 1, "4": 1, "5": 2}


def test_tasks_open_due_before_and_note_filters(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = cli_json(capsys, "tasks", "--open", "--due-before", "2026-11-30")
    assert [(t["rel_path"], t["line"], t["due"]) for t in payload["tasks"]] == [
        ("Projects/Pricing.md", 16, "2026-11-25"),
        ("Daily/2026-11-24.md", 5, "2026-11-26"),
    ]
    launch = cli_json(capsys, "tasks", "task:open project:launch")  # a note property picks the note
    assert [t["text"] for t in launch["tasks"]] == ["Draft the pricing page", "Compare competitors"]
    done = cli_json(capsys, "tasks", "--done", "website")
    assert [t["ref"] for t in done["tasks"]] == ["structured/Projects/Website.md:10"]


def test_mcp_lists_properties_and_tasks_and_filters_search(indexed: Path, cairn_home: Path) -> None:
    from core.mcp_server import build_server

    server = build_server(lambda: Engine(AppPaths(cairn_home), embedder_factory=None))

    async def call(tool: str, args: dict[str, Any]) -> str:
        res = await server.call_tool(tool, args)
        return "\n".join(c.text for c in res.content if c.type == "text")

    props = json.loads(anyio.run(call, "list_properties", {"key": "status"}))
    assert {v["value"] for v in props[0]["values"]} == {"draft", "active", "done", "review"}
    tasks = json.loads(anyio.run(call, "list_tasks", {"query": "venue", "state": "open"}))
    assert [t["ref"] for t in tasks["tasks"]] == ["structured/Projects/Launch.md:11"]
    found = anyio.run(call, "search_notes", {"query": "pricing", "mode": "keyword", "where": ["status=done"]})
    assert "Website.md" in found and "Pricing.md" not in found


@pytest.mark.skipif(not DEMO.is_dir(), reason="obsidian-tasks-demo not present")
def test_the_tasks_demo_vault(tmp_path: Path, cairn_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--vault", str(DEMO), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    every = cli_json(capsys, "tasks")["tasks"]
    assert 900 <= len(every) <= 1100
    done = cli_json(capsys, "tasks", "--done")["tasks"]
    assert done and all(t["status"] in ("done", "cancelled") for t in done)
    dated = cli_json(capsys, "tasks", "--open", "--due-before", "2021-12-01")["tasks"]
    assert dated and all(t["due"] <= "2021-12-01" and t["status"] != "done" for t in dated)
    assert any(t["priority"] == "highest" for t in every) and any(t["scheduled"] for t in every)


def test_golden_cases_take_where_conditions(indexed: Path, cairn_home: Path, tmp_path: Path) -> None:
    from core.eval.golden import GoldenFileError, load_golden
    from core.eval.runner import run_golden

    golden = tmp_path / "g.yaml"
    golden.write_text(
        "cases:\n"
        "  - {id: draft, query: pricing, where: ['status=draft', 'rating>=4'], must_include_source_paths: [Projects/Pricing.md]}\n"
        "  - {id: done, query: pricing, where: ['status=done'], must_include_source_paths: [Projects/Pricing.md]}\n"
    )
    engine = Engine(AppPaths(cairn_home), embedder_factory=None)
    report = run_golden(engine, load_golden(golden), mode="keyword", k=1)
    assert [c.passed for c in report.cases] == [True, False]  # the second case's filter leaves Pricing out
    golden.write_text("cases:\n  - {query: pricing, where: ['rating~4']}\n")
    with pytest.raises(GoldenFileError, match="where"):
        load_golden(golden)
    engine.close()


def test_mcp_base_rows_lists_and_searches_a_base(indexed: Path, cairn_home: Path) -> None:
    from core.mcp_server import build_server

    server = build_server(lambda: Engine(AppPaths(cairn_home), embedder_factory=None))

    async def call(args: dict[str, Any]) -> tuple[bool, str]:
        res = await server.call_tool("base_rows", args)
        return bool(getattr(res, "is_error", False) or getattr(res, "isError", False)), "\n".join(c.text for c in res.content if c.type == "text")

    _, listed = anyio.run(call, {"base": "structured/Projects.base"})
    assert [r["rel_path"] for r in json.loads(listed)["rows"]] == ["Projects/Launch.md", "Projects/Pricing.md", "Projects/Odd.md"]
    _, searched = anyio.run(call, {"base": "structured/Projects.base", "query": "website"})
    assert "Website.md" not in searched.split("\n", 1)[1]


def test_cli_base_lists_rows_and_reports_a_broken_file(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = cli_json(capsys, "base", str(indexed / "Projects.base"), "--view", "Everything")
    assert payload["view"] == "Everything" and payload["count"] == 4
    assert main(["base", str(indexed / "Broken.base")]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_damaged_obsidian_settings_are_reported_in_index_health(tmp_path: Path, cairn_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "v"
    shutil.copytree(FIXTURE, root)
    (root / ".obsidian" / "types.json").write_text('{"types": {"rating": "stars"}}')
    (root / ".obsidian" / "daily-notes.json").write_text("{torn")
    assert main(["index", "--vault", str(root), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    status = cli_json(capsys, "status")
    vault = status[0] if isinstance(status, list) else status["vaults"][0]
    details = [w["detail"] for w in vault["warnings"] if w["code"] == "obsidian_settings"]
    assert any("unknown type 'stars'" in d for d in details) and any("daily-notes.json" in d for d in details)
