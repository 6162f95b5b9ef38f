"""`cairn mcp` over real stdio, fed what a broken or hostile client sends: every request gets
an answer (JSON-RPC 2.0 errors -32700 / -32600 / -32602), the server keeps serving, and stdout
carries nothing but protocol lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.mcp_wire import jsonrpc_problem

REPO = Path(__file__).resolve().parents[2]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}  # fmt: skip

# (line sent, expected id, expected code)
BAD_LINES = [
    ('{"jsonrpc": "2.0", "id": 7, "method": "tools/list"', None, -32700),  # malformed JSON
    ("this is not json at all", None, -32700),
    ('[{"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]', None, -32600),  # a batch array
    ("[]", None, -32600),
    ("42", None, -32600),
    ('{"jsonrpc": "2.0", "id": 9}', 9, -32600),  # no method
    ('{"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": "oops"}', 10, -32602),
    ('{"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": [1, 2]}', 11, -32602),
    ('{"id": 12, "method": "tools/list"}', 12, -32600),  # no jsonrpc version
    ('{"jsonrpc": "2.0", "id": 13, "method": 5}', 13, -32600),
    ('{"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}', None, -32600),
]


@pytest.mark.parametrize(("line", "want_id", "code"), BAD_LINES)
def test_each_invalid_message_has_its_error(line: str, want_id: object, code: int) -> None:
    problem = jsonrpc_problem(line)
    assert problem is not None and problem["id"] == want_id and problem["error"]["code"] == code  # type: ignore[index]


def test_valid_messages_and_invalid_notifications_get_no_error_from_the_checker() -> None:
    assert jsonrpc_problem(json.dumps(INIT)) is None
    assert jsonrpc_problem('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert jsonrpc_problem('{"jsonrpc": "2.0", "id": 3, "result": {}}') is None  # a client's reply
    assert jsonrpc_problem('{"jsonrpc": "2.0", "method": "notifications/x", "params": "oops"}') == {}  # dropped, never answered


def test_a_hostile_client_over_real_stdio_gets_an_answer_to_every_request(tmp_path: Path) -> None:
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "ORT_DISABLE_TELEMETRY": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli.main", "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    guard = threading.Timer(60, proc.kill)  # a server that never answers fails the test, not hangs it
    guard.start()
    replies = []
    try:
        def send(line: str) -> dict:  # type: ignore[type-arg]
            proc.stdin.write(line + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            return json.loads(proc.stdout.readline())  # type: ignore[union-attr]

        assert send(json.dumps(INIT))["result"]["protocolVersion"] == "2025-06-18"
        proc.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for line, want_id, code in BAD_LINES:
            reply = send(line)
            replies.append(reply)
            assert reply["id"] == want_id and reply["error"]["code"] == code, (line, reply)
        unknown = send('{"jsonrpc": "2.0", "id": 20, "method": "no/such/method"}')
        assert unknown["id"] == 20 and unknown["error"]["code"] == -32601
        listed = send('{"jsonrpc": "2.0", "id": 21, "method": "tools/list"}')  # still serving
        assert listed["id"] == 21 and "search_notes" in {t["name"] for t in listed["result"]["tools"]}
    finally:
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=60)
        guard.cancel()
    assert rest == ""  # nothing but answers on stdout
    assert proc.returncode == 0


def test_an_over_long_query_over_mcp_is_a_tool_error_that_names_the_limit(tmp_path: Path) -> None:
    from core.base.paths import AppPaths
    from core.engine import Engine

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nthe spring budget\n")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    engine.add_vault(vault, name="v")
    engine.sync(["v"], embed=False)
    engine.close()
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "ORT_DISABLE_TELEMETRY": "1", "PYTHONPATH": str(REPO)}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "search_notes", "arguments": {"query": "budget " * 20_000, "mode": "keyword"}}}  # fmt: skip
    lines = "\n".join([json.dumps(INIT), '{"jsonrpc": "2.0", "method": "notifications/initialized"}', json.dumps(call)]) + "\n"
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli.main", "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    guard = threading.Timer(60, proc.kill)
    guard.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(lines)
        proc.stdin.flush()
        replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=60)
        guard.cancel()
    result = replies[1]["result"]
    assert result["isError"] is True and "limit is 2,000" in result["content"][0]["text"]
