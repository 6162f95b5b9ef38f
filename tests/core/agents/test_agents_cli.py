"""`cairn agents add|list|revoke|log` and `cairn serve`, as a user types them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from core.agents.audit import AuditEntry, AuditLog
from core.agents.runner import find_running
from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine

REPO = Path(__file__).resolve().parents[3]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def indexed(cairn_home: Path, sample_vault: Path) -> Path:
    engine = Engine(AppPaths(cairn_home), embedder_factory=None)
    engine.add_vault(sample_vault)
    engine.close()
    return cairn_home


def test_add_prints_the_token_once_and_keeps_only_its_hash(capsys: pytest.CaptureFixture[str], indexed: Path) -> None:
    code, out, _ = run(capsys, "agents", "add", "claude", "--folder", "sample-vault/Recipes", "--tools", "search,fetch", "--json")
    assert code == 0
    added = json.loads(out)
    token = added["token"]
    assert token.startswith("cairn_") and len(token) > 40
    assert added["scope"] == {"areas": [{"vault": "sample-vault", "folder": "Recipes"}], "tools": ["fetch", "search"], "internal": False, "rate": 60}
    stored = (indexed / "agents" / "agents.json").read_text()
    assert token not in stored and "token_sha256" in stored
    code, out, _ = run(capsys, "agents", "list")
    assert "claude" in out and "sample-vault/Recipes; fetch, search; public only; 60/min" in out and token not in out
    code, out, _ = run(capsys, "agents", "list", "--json")
    assert token not in out and json.loads(out)[0]["name"] == "claude" and json.loads(out)[0]["expires"] is None
    _, out, _ = run(capsys, "agents", "add", "temp", "--expires-days", "7", "--json")
    assert json.loads(out)["expires"] > added_at(json.loads(out)["token"], indexed)
    assert ", until 20" in run(capsys, "agents", "list")[1]


def added_at(token: str, home: Path) -> str:
    from core.agents.tokens import AgentStore

    agent = AgentStore(AppPaths(home)).verify(token)
    assert agent is not None
    return agent.created


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("agents", "add", "x", "--vault", "nope"), "no vault named 'nope'"),
        (("agents", "add", "x", "--folder", "nope/Recipes"), "not VAULT/FOLDER of a known vault"),
        (("agents", "add", "x", "--tools", "search,delete"), "unknown tool(s) delete"),
        (("agents", "add", "bad name!"), "agent name"),
        (("agents", "add", "x", "--rate", "-1"), "--rate"),
        (("agents", "revoke", "ghost"), "no agent named 'ghost'"),
        (("agents", "add", "x", "--expires-days", "0"), "more than 0 days"),
    ],
)
def test_bad_input_is_a_usage_error(capsys: pytest.CaptureFixture[str], indexed: Path, argv: tuple[str, ...], message: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err


def test_a_name_is_taken_until_revoked(capsys: pytest.CaptureFixture[str], indexed: Path) -> None:
    assert run(capsys, "agents", "add", "claude")[0] == 0
    code, _, err = run(capsys, "agents", "add", "claude")
    assert code == 2 and "exists" in err
    assert run(capsys, "agents", "revoke", "claude")[0] == 0
    assert run(capsys, "agents", "add", "claude")[0] == 0


def test_log_lists_calls_newest_first_per_client_and_per_note(capsys: pytest.CaptureFixture[str], indexed: Path) -> None:
    log = AuditLog(AppPaths(indexed))
    log.append(AuditEntry("claude", "search_notes", "ok", "soup", ("sample-vault/Recipes/Roasted tomato soup.md#0",)))
    log.append(AuditEntry("cursor", "fetch_note_chunk", "not found", "sample-vault/People/x.md#0"))
    log.append(AuditEntry("claude", "search_notes", "ok", "bread", ("sample-vault/Recipes/Sourdough loaf.md#1",)))
    log.close()
    _, out, _ = run(capsys, "agents", "log")
    lines = out.strip().splitlines()
    assert ["bread" in lines[0], "cursor" in lines[1], "soup" in lines[2]] == [True, True, True]
    _, out, _ = run(capsys, "agents", "log", "claude", "--json")
    assert [e["query"] for e in json.loads(out)] == ["bread", "soup"]
    _, out, _ = run(capsys, "agents", "log", "--note", "tomato soup", "--json")
    assert [e["query"] for e in json.loads(out)] == ["soup"]


def test_the_log_rotates_and_is_still_read_newest_first(tmp_path: Path) -> None:
    log = AuditLog(AppPaths(tmp_path), max_bytes=2_000, backups=3)
    for i in range(100):
        log.append(AuditEntry("a", "search_notes", "ok", f"q{i}", (f"v/n{i}.md#0",)))
    log.close()
    files = sorted(p.name for p in (tmp_path / "agents").glob("audit.jsonl*"))
    assert files == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"]
    assert all(p.stat().st_size <= 2_200 for p in (tmp_path / "agents").glob("audit.jsonl*"))
    queries = [e.query for e in AuditLog(AppPaths(tmp_path), backups=3).entries(limit=1000)]
    assert queries[0] == "q99" and queries == sorted(queries, key=lambda q: -int(q[1:]))


def test_serve_announces_itself_serves_and_stops_cleanly_on_sigterm(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "agents", "add", "claude", "--json")
    token = json.loads(out)["token"]
    env = {**os.environ, "CAIRN_HOME": str(indexed), "PYTHONPATH": str(REPO), "ORT_DISABLE_TELEMETRY": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "core.cli.main", "serve", "--port", "0"], env=env, cwd=REPO, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        running = None
        while running is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            running = find_running(AppPaths(indexed))
        assert running is not None and running.pid == proc.pid
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_vaults", "arguments": {}}}
        r = httpx.post(running.url, json=body, headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}, timeout=30)
        assert r.status_code == 200 and "sample-vault" in r.text
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "MCP over HTTP at http://127.0.0.1:" in err and "server stopped" in err
    assert find_running(AppPaths(indexed)) is None and not (indexed / "agents" / "server.json").exists()


def test_serve_on_a_taken_port_says_so(indexed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        code, _, err = run(capsys, "serve", "--port", str(taken.getsockname()[1]))
    assert code == 2 and "cannot listen on 127.0.0.1" in err and "--port" in err


def test_serve_with_watch_finds_a_note_written_while_serving(cairn_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "live"
    vault.mkdir()
    (vault / "First.md").write_text("---\nconfidentiality: public\n---\n# First\n\nNothing special here.\n")
    engine = Engine(AppPaths(cairn_home), embedder_factory=None)
    engine.add_vault(vault)
    engine.sync(embed=False)
    engine.close()
    token = json.loads(run(capsys, "agents", "add", "watcher", "--json")[1])["token"]
    env = {**os.environ, "CAIRN_HOME": str(cairn_home), "PYTHONPATH": str(REPO), "ORT_DISABLE_TELEMETRY": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "core.cli.main", "serve", "--port", "0", "--watch"], env=env, cwd=REPO, stderr=subprocess.PIPE, text=True)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_notes", "arguments": {"query": "quetzal", "mode": "keyword"}}}
    try:
        deadline = time.monotonic() + 60
        running = None
        while running is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            running = find_running(AppPaths(cairn_home))
        assert running is not None
        time.sleep(1.0)  # the watcher is up before the server announces itself; give inotify a moment
        (vault / "Second.md").write_text("---\nconfidentiality: public\n---\n# Second\n\nA quetzal flew by.\n")
        found = ""
        while time.monotonic() < deadline and "live/Second.md" not in found:
            time.sleep(0.5)
            found = httpx.post(running.url, json=body, headers=headers, timeout=30).json()["result"]["content"][0]["text"]
        assert "live/Second.md" in found
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
