"""A real shared server on 127.0.0.1 (a free port) over a small two-vault fixture, and an SDK client.

The `work` vault has a granted folder (`Projects/`), a folder that is not
(`Private/`), an internal note and a restricted one inside the granted folder; a
second vault (`other-vault`) is never granted to the scoped agent. Every note
outside an agent's view carries a marker word that must never reach it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from core.agents.gate import BackOff
from core.agents.runner import AgentService, ServerOptions
from core.agents.scope import Area, Scope, Tool
from core.base.paths import AppPaths
from core.engine import Engine

PUBLIC = "---\nconfidentiality: public\n---\n"
NOTES = {
    "work/Projects/Plan.md": PUBLIC + "# Plan\n\nThe garden plan: beds, compost and [[Secret plan]]; see also [[Garden]].\n",
    "work/Projects/Garden.md": PUBLIC + "# Garden\n\n#garden Tomatoes and basil follow the garden plan. Links back to [[Plan]].\n",
    "work/Projects/Internal notes.md": "# Internal notes\n\nThe lemur budget for the garden plan.\n",
    "work/Projects/Restricted.md": "---\nconfidentiality: restricted\n---\n# Restricted\n\nThe quokka salary sits beside the garden plan. [[Plan]]\n",
    "work/Projects/Keys.md": PUBLIC + "# Keys\n\nThe deploy api_key = sk-abcdefghijklmnopqrstuvwx1234 for the garden robot.\n",
    "work/Private/Secret plan.md": PUBLIC + "# Secret plan\n\n#garden The zanzibar garden plan, kept apart. See [[Plan]].\n",
    "other-vault/Notes.md": PUBLIC + "# Notes\n\nThe ocelot garden plan of another vault. Plan garden.\n",
}
#: Words and paths of notes the scoped agent must never learn about.
HIDDEN_MARKERS = ("zanzibar", "Private/", "Secret plan.md", "ocelot", "other-vault", "lemur", "Internal notes", "quokka", "Restricted")
#: What no agent at all may learn about (restricted notes).
RESTRICTED_MARKERS = ("quokka", "Restricted.md")


@dataclass
class Served:
    service: AgentService
    engine: Engine
    tokens: dict[str, str]
    backoff: BackOff

    @property
    def url(self) -> str:
        return self.service.url


def make_vaults(root: Path) -> list[Path]:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return [root / "work", root / "other-vault"]


AGENTS = {
    "scoped": Scope(areas=(Area("work", "Projects"),), rate=0),
    "full": Scope(internal=True, rate=0),
    "search-only": Scope(tools=frozenset({Tool.SEARCH}), rate=0),
    "slow-rate": Scope(rate=2),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("agents-home")
    paths = AppPaths(home)
    engine = Engine(paths)  # as `cairn mcp` opens it, so bridged and in-process answers compare; no vectors built
    for vault in make_vaults(tmp_path_factory.mktemp("vaults")):
        engine.add_vault(vault)
    engine.sync(embed=False)
    backoff = BackOff(free_failures=3, base_delay=0.3, max_delay=1.0)
    service = AgentService(paths, lambda: engine, ServerOptions(port=0, max_body_bytes=64 * 1024, max_in_flight=16, body_timeout=3.0, backoff=backoff))
    tokens = {name: service.store.add(name, scope)[1] for name, scope in AGENTS.items()}
    service.start()
    assert service.wait_running(), service.error
    yield Served(service, engine, tokens, backoff)
    service.stop()
    engine.close()


Call = tuple[str, Any]  # ("tool", (name, args)) | ("read", uri) | ("resources", None) | ("tools", None)


async def run_session(url: str, token: str, calls: dict[str, Call]) -> dict[str, tuple[bool, str]]:
    """Every call in one SDK client session; (is_error, text) per key."""
    out: dict[str, tuple[bool, str]] = {}
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as client:
                await client.initialize()
                for key, (kind, arg) in calls.items():
                    out[key] = await _one(client, kind, arg)
    return out


async def _one(client: ClientSession, kind: str, arg: Any) -> tuple[bool, str]:
    if kind == "tool":
        res = await client.call_tool(arg[0], arg[1])
        return bool(res.is_error), "\n".join(c.text for c in res.content if c.type == "text")
    if kind == "tools":
        return False, "\n".join(t.name for t in (await client.list_tools()).tools)
    if kind == "resources":
        return False, "\n".join(str(r.uri) for r in (await client.list_resources()).resources)
    try:
        read = await client.read_resource(arg)
    except Exception as exc:  # noqa: BLE001 - the SDK raises MCPError for a JSON-RPC error answer
        return True, str(exc)
    return False, "\n".join(getattr(c, "text", "") for c in read.contents)


@pytest.fixture(scope="module")
def session(served: Served) -> Callable[[str, dict[str, Call]], dict[str, tuple[bool, str]]]:
    def call(agent: str, calls: dict[str, Call]) -> dict[str, tuple[bool, str]]:
        return anyio.run(run_session, served.url, served.tokens[agent], calls)

    return call
