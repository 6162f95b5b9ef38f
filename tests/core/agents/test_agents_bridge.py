"""`cairn mcp` bridges stdio to the running shared server: a stdio client (the SDK's) gets the same
answers through the bridge as from the in-process server, and falls back to in-process when the
announced server is gone."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from core.agents.runner import find_running, state_file
from core.base.paths import AppPaths
from tests.core.agents.agent_helpers import Served

REPO = Path(__file__).resolve().parents[3]
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "search": ("search_notes", {"query": "garden plan", "k": 5}),
    "search_folder": ("search_notes", {"query": "tomatoes", "vault": "work", "folder": "Projects", "mode": "keyword"}),
    "fetch": ("fetch_note_chunk", {"ref": "work/Projects/Garden.md#0"}),
    "fetch_restricted": ("fetch_note_chunk", {"ref": "work/Projects/Restricted.md#0"}),
    "fetch_missing": ("fetch_note_chunk", {"ref": "work/Projects/Gone.md#0"}),
    "links": ("note_links", {"note": "Plan", "vault": "work"}),
    "ask": ("ask_notes", {"question": "What do tomatoes and basil follow?"}),
    "bad_k": ("search_notes", {"query": "garden", "k": 0}),
    "typo": ("search_notes", {"query": "tomatoes gardne", "mode": "keyword"}),
    "as_typed": ("search_notes", {"query": "tomatoes gardne", "mode": "keyword", "as_typed": True}),
}


def stdio_answers(home: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[set[str], dict[str, tuple[bool, str]], str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "core.cli.main", "mcp", *extra],
        env={"CAIRN_HOME": str(home), "PYTHONPATH": str(REPO), "ORT_DISABLE_TELEMETRY": "1", **(env or {})},
        cwd=str(REPO),
    )
    errlog = home / f"stderr-{len(extra)}-{len(env or {})}.txt"

    async def run() -> tuple[set[str], dict[str, tuple[bool, str]]]:
        with errlog.open("w") as err, anyio.fail_after(90):
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                tools = {t.name for t in (await client.list_tools()).tools}
                out = {}
                for key, (tool, args) in CALLS.items():
                    res = await client.call_tool(tool, args)
                    out[key] = (bool(res.is_error), "\n".join(c.text for c in res.content if c.type == "text"))
                return tools, out

    tools, out = anyio.run(run)
    return tools, out, errlog.read_text()


def test_the_bridge_answers_as_the_in_process_server_does(served: Served) -> None:
    home = served.service.paths.data_dir
    bridged_tools, bridged, bridged_err = stdio_answers(home)
    local_tools, local, local_err = stdio_answers(home, "--no-bridge")
    assert "bridged to the running server" in bridged_err and "bridged" not in local_err
    assert local_tools <= bridged_tools
    for key in CALLS:
        assert bridged[key][0] == local[key][0], key
        if key not in ("bad_k", "fetch_restricted"):  # the SDK's validation message names the function it wraps
            assert bridged[key][1] == local[key][1], key
    # In process the user's own client is told the note is restricted; through the shared server
    # it reads as absent, as it does for every agent.
    assert "restricted" in local["fetch_restricted"][1] and "is not in the index" in bridged["fetch_restricted"][1]
    assert "search instead for 'tomatoes gardne' (search_notes with as_typed=true)" in bridged["typo"][1]
    assert "showing results for" not in bridged["as_typed"][1]
    calls = served.service.audit.entries(client="local-stdio", limit=100)
    assert {e.tool for e in calls} >= {"search_notes", "fetch_note_chunk", "note_links", "ask_notes"}


def test_the_bridge_calls_as_a_named_agent_when_given_its_token(served: Served) -> None:
    home = served.service.paths.data_dir
    tools, answers, _ = stdio_answers(home, env={"CAIRN_AGENT_TOKEN": served.tokens["search-only"]})
    assert tools == {"search_notes", "list_properties", "list_tasks", "base_rows"}  # the tools `search` grants
    assert answers["fetch"][0] and "may not call" in answers["fetch"][1]


def test_a_stale_state_file_means_no_server(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path)
    state_file(paths).parent.mkdir(parents=True)
    state_file(paths).write_text(json.dumps({"url": "http://127.0.0.1:9/mcp", "port": 9, "pid": 2**22 + 7, "bridge_token": "cairn_x"}))
    assert find_running(paths) is None
    state_file(paths).write_text("{damaged")
    assert find_running(paths) is None
