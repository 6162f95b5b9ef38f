"""Many agents on one shared server: 8 concurrent agents × 100 mixed calls, a burst, and memory.

The server runs in a child process as the app would run it: one engine (keyword index,
vectors, the real MiniLM model) warmed by hybrid searches, then the shared MCP server
started on 127.0.0.1. The child's main thread stands in for the app's UI thread: a
10 ms timer on a Qt event loop records how late it fires while the agents call (the
largest lateness is the UI stall). This process is the agents: the SDK's Streamable HTTP
client, one session per agent, all at once.

Figures: errors; p50/p95 per tool; a burst of N raw httpx POSTs (answered ok / busy / 503,
then the server still serves); the server process's RSS before the server starts (off),
after the load (on); and one `cairn mcp` stdio process's RSS after the same warm-up, which is
what each agent would cost without the shared server. Every feature is used once in process
before "off" is measured (the first search, links call and question load the index, the model,
the link graph and Ask's parts), so on-vs-off is the server's own cost.

    python bench/bench_agents.py --notes 1000 --agents 8 --calls 100 --burst 1000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, summary_ms, write_result  # noqa: E402

WARM_QUERIES = ["backup schedule for the server", "release checklist", "garden recipe tomatoes", "travel hotel invoice"]
MIX = [("search_notes", 50), ("fetch_note_chunk", 20), ("ask_notes", 10), ("note_links", 10), ("related_notes", 5), ("list_vaults", 5)]


def rss_mib(pid: int | str = "self") -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


# -- the server process ----------------------------------------------------------------------


def warm_up(engine: Any, home: Path) -> None:
    """Use every feature once in process, as the app's user would have: the first search loads
    the index and the model, the first links call the link graph, the first question Ask's parts.
    'Server off' is measured after this, so on-vs-off is the server's own cost."""
    from core.agents.access import ScopedEngine
    from core.agents.scope import Scope
    from core.search.search import SearchRequest

    view = ScopedEngine(engine, Scope(internal=True, rate=0))
    titles = titles_of(home.parent / "synth")[:3]
    for q in WARM_QUERIES * 3:
        engine.search(SearchRequest(q, k=8))
    for t in titles:
        view.links("synth", t, 5)
        view.ask(f"What about {t}?", None, None)


def serve_child(home: Path, n_agents: int) -> None:
    """Engine warm, RSS (off), server on, tokens out; then answer 'rss' / 'quit' on stdin."""
    from PySide6.QtCore import QCoreApplication, QTimer

    from core.agents.runner import AgentService, ServerOptions
    from core.agents.scope import Scope
    from core.base.paths import AppPaths
    from core.engine import Engine

    paths = AppPaths(home)
    engine = Engine(paths)
    warm_up(engine, home)
    off = rss_mib()
    service = AgentService(paths, lambda: engine, ServerOptions(port=0))
    tokens = []
    for i in range(n_agents):
        agent = f"bench{i}-{os.getpid()}"
        tokens.append(service.store.add(agent, Scope(internal=True, rate=0))[1])
    service.start()
    service.wait_running()
    on_idle = rss_mib()
    app = QCoreApplication([])
    lateness: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        lateness.append(max(0.0, (now - last[0]) * 1000 - 10))
        last[0] = now

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    print(json.dumps({"url": service.url, "tokens": tokens, "rss_off": off, "rss_on_idle": on_idle}), flush=True)

    def control() -> None:
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "reset":
                lateness.clear()
                print(json.dumps({"ok": True}), flush=True)
            elif cmd == "rss":
                worst = sorted(lateness)
                print(json.dumps({"rss_on": rss_mib(), "ui_max_late_ms": round(worst[-1], 1) if worst else 0.0,
                                  "ui_p99_late_ms": round(worst[int(len(worst) * 0.99)] if worst else 0.0, 1), "ticks": len(worst)}), flush=True)
            elif cmd == "quit":
                break
        service.stop()
        for name in [f"bench{i}-{os.getpid()}" for i in range(n_agents)]:
            service.store.revoke(name)
        app.quit()

    threading.Thread(target=control, daemon=True).start()
    app.exec()


# -- the agents ------------------------------------------------------------------------------


def titles_of(vault: Path) -> list[str]:
    return sorted(p.stem for p in vault.rglob("*.md"))


def plan(rng: random.Random, titles: list[str], calls: int) -> list[tuple[str, dict[str, Any]]]:
    tools = [t for t, w in MIX for _ in range(w)]
    out = []
    for _ in range(calls):
        tool = rng.choice(tools)
        title = rng.choice(titles)
        words = " ".join(rng.sample(title.replace("-", " ").split(), k=min(2, len(title.split("-" if "-" in title else " ")))))
        if tool == "search_notes":
            out.append((tool, {"query": words or title, "k": 8}))
        elif tool == "ask_notes":
            out.append((tool, {"question": f"What about {words or title}?"}))
        elif tool in ("note_links", "related_notes"):
            out.append((tool, {"note": title, "vault": "synth", "k": 5}))
        elif tool == "fetch_note_chunk":
            out.append((tool, {"query_for_ref": words or title}))
        else:
            out.append((tool, {}))
    return out


async def agent(url: str, token: str, calls: list[tuple[str, dict[str, Any]]], times: dict[str, list[float]], errors: Counter[str]) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        async with streamable_http_client(url, http_client=http) as streams, ClientSession(streams[0], streams[1]) as client:
            await client.initialize()
            last_ref = ""
            for tool, args in calls:
                if "query_for_ref" in args:
                    if not last_ref:
                        tool, args = "search_notes", {"query": args["query_for_ref"], "k": 8}
                    else:
                        args = {"ref": last_ref}
                started = time.perf_counter()
                try:
                    res = await client.call_tool(tool, args)
                except Exception as exc:  # noqa: BLE001 - a transport failure is an error to count
                    errors[f"{tool}: {type(exc).__name__}"] += 1
                    continue
                times[tool].append((time.perf_counter() - started) * 1000)
                text = "\n".join(c.text for c in res.content if c.type == "text")
                if res.is_error and "not an indexed note" not in text:
                    errors[f"{tool}: {text[:80]}"] += 1
                if tool == "search_notes" and "full text: fetch" in text:
                    last_ref = text.rsplit("e.g. ", 1)[-1].strip()


def burst(url: str, token: str, n: int) -> Counter[str]:
    import anyio
    import httpx

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_notes", "arguments": {"query": "release checklist", "k": 3}}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}

    async def run() -> Counter[str]:
        outcomes: Counter[str] = Counter()
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=n, max_keepalive_connections=0)) as client:

            async def one() -> None:
                try:
                    r = await client.post(url, json=body, headers=headers)
                except httpx.HTTPError as exc:
                    outcomes[f"transport {type(exc).__name__}"] += 1
                    return
                if r.status_code != 200:
                    outcomes[str(r.status_code)] += 1
                    return
                result = r.json()["result"]
                outcomes["busy" if result.get("isError") and "busy" in result["content"][0]["text"] else "error" if result.get("isError") else "ok"] += 1

            async with anyio.create_task_group() as tg:
                for _ in range(n):
                    tg.start_soon(one)
        return outcomes

    return anyio.run(run)


def stdio_rss(home: Path) -> float:
    """RSS of one `cairn mcp --no-bridge` after the same warm-up searches (what each stdio agent costs)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {"CAIRN_HOME": str(home), "PYTHONPATH": str(REPO), "ORT_DISABLE_TELEMETRY": "1", "PATH": os.environ.get("PATH", "")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "core.cli.main", "mcp", "--no-bridge"], env=env, cwd=str(REPO))

    async def run() -> float:
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w), ClientSession(r, w) as client:  # noqa: SIM115
            await client.initialize()
            titles = titles_of(home.parent / "synth")[:3]
            for q in WARM_QUERIES * 3:
                await client.call_tool("search_notes", {"query": q})
            for t in titles:
                await client.call_tool("note_links", {"note": t, "vault": "synth", "k": 5})
                await client.call_tool("ask_notes", {"question": f"What about {t}?"})
            child = _newest_child("core.cli.main mcp --no-bridge")
            return rss_mib(child)["VmRSS"] if child else 0.0

    return anyio.run(run)


def _newest_child(needle: str) -> int | None:
    me = os.getpid()
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            ppid = int(next(line.split()[1] for line in (d / "status").read_text().splitlines() if line.startswith("PPid:")))
        except (OSError, StopIteration, ValueError):
            continue
        if needle in cmd and ppid == me:
            found.append(int(d.name))
    return max(found) if found else None


def prepare(home: Path, notes: int, embed: bool) -> tuple[Path, float]:
    from synth_vault import generate_vault

    from core.base.paths import AppPaths
    from core.engine import Engine

    vault = home.parent / "synth"
    if not vault.exists():
        generate_vault(vault, notes)
    started = time.perf_counter()
    engine = Engine(AppPaths(home))
    if not engine.vaults:
        engine.add_vault(vault, name="synth")
    engine.sync(embed=embed)
    engine.close()
    return vault, time.perf_counter() - started


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--notes", type=int, default=1000)
    p.add_argument("--agents", type=int, default=8)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--burst", type=int, default=1000)
    p.add_argument("--no-embed", action="store_true", help="keyword index only (hybrid falls back to keyword)")
    p.add_argument("--work", type=Path, default=None, help="folder for the vault and index (kept between runs)")
    p.add_argument("--serve-child", type=Path, default=None, help=argparse.SUPPRESS)
    return p


def main() -> int:
    args = _parser().parse_args()
    if args.serve_child:
        serve_child(args.serve_child, args.agents)
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-bench-agents-"))
    home = work / "home"
    vault, index_s = prepare(home, args.notes, not args.no_embed)
    env = {**os.environ, "PYTHONPATH": str(REPO), "ORT_DISABLE_TELEMETRY": "1", "QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.Popen([sys.executable, __file__, "--serve-child", str(home), "--agents", str(args.agents)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdin is not None and child.stdout is not None
    hello = json.loads(child.stdout.readline())
    titles = titles_of(vault)
    times: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()

    import anyio

    async def all_agents() -> None:
        async with anyio.create_task_group() as tg:
            for i, token in enumerate(hello["tokens"]):
                tg.start_soon(agent, hello["url"], token, plan(random.Random(i), titles, args.calls), times, errors)

    child.stdin.write("reset\n")
    child.stdin.flush()
    child.stdout.readline()
    time.sleep(3)  # the idle server: how late the "UI" timer is with nobody calling (the machine's own noise)
    child.stdin.write("rss\nreset\n")
    child.stdin.flush()
    idle = json.loads(child.stdout.readline())
    child.stdout.readline()
    started = time.perf_counter()
    anyio.run(all_agents)
    wall = time.perf_counter() - started
    child.stdin.write("rss\n")
    child.stdin.flush()
    after_load = json.loads(child.stdout.readline())
    outcomes = burst(hello["url"], hello["tokens"][0], args.burst) if args.burst else Counter()
    after_burst = burst(hello["url"], hello["tokens"][0], 1)
    child.stdin.write("quit\n")
    child.stdin.flush()
    child.wait(60)
    stdio = stdio_rss(home)
    name = "bench_agents" + ("_keyword" if args.no_embed else "")
    result = {
        "notes": args.notes, "embedded": not args.no_embed, "index_s": round(index_s, 1), "agents": args.agents, "calls_per_agent": args.calls,
        "wall_s": round(wall, 1), "calls": sum(len(v) for v in times.values()), "errors": dict(errors),
        "per_tool": {t: summary_ms(v) for t, v in sorted(times.items())},
        "burst": dict(outcomes), "serves_after_burst": after_burst.get("ok", 0) == 1,
        "rss_server_off_mib": hello["rss_off"]["VmRSS"], "rss_server_on_idle_mib": hello["rss_on_idle"]["VmRSS"],
        "rss_server_on_mib": after_load["rss_on"]["VmRSS"],
        "peak_rss_server_mib": after_load["rss_on"]["VmHWM"], "ui_max_late_ms": after_load["ui_max_late_ms"],
        "ui_p99_late_ms": after_load["ui_p99_late_ms"], "ui_idle_max_late_ms": idle["ui_max_late_ms"], "rss_one_stdio_server_mib": stdio,
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(result, indent=2))
    write_result(name, result)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
