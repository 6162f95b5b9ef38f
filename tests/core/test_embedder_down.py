"""A remote embedder that is down degrades every command to keyword search, with the reason shown.

Three real servers on 127.0.0.1: one that refuses connections (a closed port), one that accepts
and never answers (short timeouts), one that answers HTTP 200 with garbage. Before this was
handled, `cairn status`, `index`, `search`, `similar`, `links` and `ask` ended in a traceback and
the MCP tools answered "Error executing tool".
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest

from core.base.config import VaultConfig
from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine
from core.mcp_server import build_server
from core.providers.embedding import Embedder
from core.providers.embedding.remote import OllamaEmbedder
from core.search.search import SearchRequest

SHORT_TIMEOUT = 0.5


def refusing_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # closed again: connecting is refused


@pytest.fixture
def hanging_url() -> Iterator[str]:
    """Accepts connections and reads the request, never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    for conn in held:
        conn.close()
    server.close()


def _reply(handler: BaseHTTPRequestHandler, body: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class Garbage(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"<html>I am a router admin page, not an embeddings server</html>"
        _reply(self, body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def garbage_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "budget.md").write_text("# Budget\n\nThe household budget for the spring trip. See [[garden]].\n")
    (root / "garden.md").write_text("# Garden\n\nTomatoes, basil and a spring budget for seeds.\n")
    return root


def point_at(engine: Engine, url: str) -> None:
    vaults = tuple(replace(v, embedder="ollama", embed_model="nomic-embed-text", embed_base_url=url) for v in engine.config.vaults)
    engine.update_config(replace(engine.config, vaults=vaults))


def short_timeout(vc: VaultConfig) -> Embedder:
    assert vc.embed_base_url is not None
    return OllamaEmbedder(vc.embed_base_url, vc.embed_model or "m", timeout=SHORT_TIMEOUT, max_attempts=1)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def keyword_indexed(vault: Path, url: str) -> None:
    engine = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        engine.add_vault(vault, name="v")
        engine.sync(["v"], embed=False)
        point_at(engine, url)
    finally:
        engine.close()


# -- the CLI, with the real default embedder factory -------------------------------------------------


@pytest.mark.parametrize("server", ["refusing", "garbage"])
def test_every_command_degrades_to_keyword_with_the_reason(
    capsys: pytest.CaptureFixture[str], vault: Path, server: str, request: pytest.FixtureRequest
) -> None:
    url = refusing_url() if server == "refusing" else request.getfixturevalue("garbage_url")
    reason = "Cannot connect" if server == "refusing" else "unexpected response"
    keyword_indexed(vault, url)

    code, out, err = run(capsys, "status", "--json")
    assert code == 0 and "Traceback" not in err, err
    (status,) = json.loads(out)["vaults"]
    assert reason in json.dumps(status)

    code, out, err = run(capsys, "index", "--json", "--quiet")
    assert code == 0, err
    assert reason in json.loads(out)["vaults"][0]["semantic_problem"]

    for mode in ("hybrid", "semantic"):
        code, out, err = run(capsys, "search", "spring budget", "--mode", mode, "--json")
        assert code == 0, err
        payload = json.loads(out)
        assert payload["mode"] == "keyword" and payload["hits"]
        assert any(reason in w for w in payload["warnings"]), payload["warnings"]

    code, out, err = run(capsys, "links", "budget.md", "--json")
    assert code == 0, err
    assert json.loads(out)["outgoing"]

    code, out, err = run(capsys, "similar", "budget.md")
    assert code != 0 and reason in err and "Traceback" not in err

    code, out, err = run(capsys, "ask", "what is the spring budget for?", "--json")
    assert code == 0, err
    assert json.loads(out)["references"]


# -- the engine and the MCP tools, all three servers (short timeouts) ---------------------------------


@pytest.mark.parametrize("server", ["refusing", "hanging", "garbage"])
def test_the_engine_and_mcp_tools_answer_from_keywords(vault: Path, server: str, request: pytest.FixtureRequest) -> None:
    url = refusing_url() if server == "refusing" else request.getfixturevalue(f"{server}_url")
    reason = {"refusing": "Cannot connect", "hanging": "did not answer", "garbage": "unexpected response"}[server]
    keyword_indexed(vault, url)
    factory: Callable[[], Engine] = lambda: Engine(AppPaths.from_env(), embedder_factory=short_timeout)  # noqa: E731

    engine = factory()
    try:
        (report,) = engine.sync(["v"])
        assert report.semantic_problem and reason in report.semantic_problem
        resp = engine.search(SearchRequest("spring budget"))
        assert resp.mode == "keyword" and resp.hits and any(reason in w for w in resp.warnings)
        assert reason in (engine.vault_status("v").semantic_reason or "")
        assert engine.links("v", "budget.md").outgoing
        engine.update_notes("v", ["budget.md"])
    finally:
        engine.close()

    server_ = build_server(factory)

    async def call(name: str, args: dict[str, Any]) -> tuple[bool, str]:
        result = await server_.call_tool(name, args)
        text = "\n".join(getattr(c, "text", "") for c in result.content)  # type: ignore[union-attr]
        return bool(result.is_error), text  # type: ignore[union-attr]

    for name, args in (
        ("search_notes", {"query": "spring budget"}),
        ("list_vaults", {}),
        ("note_links", {"note": "budget.md"}),
        ("ask_notes", {"question": "what is the spring budget for?"}),
    ):
        is_error, text = anyio.run(call, name, args)
        assert not is_error, (name, text)
        assert "Error executing tool" not in text
        if name in ("search_notes", "list_vaults"):
            assert reason in text, (name, text)


class Switchable(BaseHTTPRequestHandler):
    """Ollama's /api/embed with 4-dimensional vectors while `up`, garbage after."""

    up = True

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        texts = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))["input"]
        if type(self).up:
            body = json.dumps({"embeddings": [[1.0, float(len(t) % 7), 0.5, float(i)] for i, t in enumerate(texts)]}).encode()
        else:
            body = b"{}"
        _reply(self, body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_server_that_goes_away_after_indexing_falls_back_mid_search(vault: Path) -> None:
    handler = type("Handler", (Switchable,), {"up": True})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        keyword_indexed(vault, f"http://127.0.0.1:{server.server_address[1]}")
        engine = Engine(AppPaths.from_env(), embedder_factory=short_timeout)
        try:
            (report,) = engine.sync(["v"])
            assert report.semantic_problem is None and report.embedding is not None and report.embedding.embedded > 0
            assert engine.search(SearchRequest("spring budget")).mode == "hybrid"
            handler.up = False  # the server now answers nonsense: the query vector cannot be made
            resp = engine.search(SearchRequest("garden seeds"))
            assert resp.mode == "keyword" and resp.hits
            assert any("unexpected response" in w for w in resp.warnings), resp.warnings
            assert "unexpected response" in (engine.vault_status("v").semantic_reason or "")
        finally:
            engine.close()
    finally:
        server.shutdown()
        server.server_close()
