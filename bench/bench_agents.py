"""Many agents on one shared server: 8 concurrent agents × 100 mixed calls, a burst, and memory.

The server runs in a child process as the app would run it: the interpreter set up as
`desktop.app.main` sets it up (1 ms GIL switch interval, startup heap frozen, the survivors
of a slow full GC pass frozen), one engine (keyword index, vectors, the real MiniLM model
for queries) warmed by hybrid searches, then the shared MCP server started on 127.0.0.1.
The child's main thread stands in for the app's UI thread: a 10 ms timer on a Qt event loop
records how late it fires (the largest lateness is the UI stall) while the server is idle,
while the agents call and during the burst; for each stall, how much of it the thread spent
waiting for a core (the kernel's run-queue time), and every GC pass's wall and CPU time.
This process is the agents: the SDK's Streamable HTTP client, one session per agent, all at once.

Figures: errors; p50/p95 per tool; a burst of N raw httpx POSTs (answered ok / busy / 503,
then the server still serves); the server process's RSS before the server starts (off),
after the load (on); and one `cairn mcp` stdio process's RSS after the same warm-up, which is
what each agent would cost without the shared server. Every feature is used once in process
before "off" is measured (the first search, links call and question load the index, the model,
the link graph and Ask's parts), so on-vs-off is the server's own cost.

    python bench/bench_agents.py --notes 10000 --random-vectors --work W --prepare-only   # at nice 15
    python bench/bench_agents.py --notes 10000 --random-vectors --work W --burst 1000

`--random-vectors` gives every chunk a seeded random unit vector (as bench_memory.py does;
embedding 10k notes with the model takes hours on 2 cores, and a search costs the same
whatever the vectors mean), so search, ask and related take the hybrid path. `--bare-interpreter`
runs the server child without the app's set-up (as measured before it was added);
`--slots N` and `--thread-nice N` set the server's engine slots and its threads' niceness;
`--no-turns` lets the tool workers run Python side by side (as before `core.base.python_turns`).
With CAIRN_BENCH_NAME_STALLS=1 in the environment, the child also names what its other threads
ran during each stall (a sampling thread: it costs some CPU, so not for the reported figures).
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
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agents_server_child import serve_child, stdio_rss, titles_of  # noqa: E402
from common import REPO, summary_ms, write_result  # noqa: E402

MIX = [
    ("search_notes", 50),
    ("fetch_note_chunk", 20),
    ("ask_notes", 10),
    ("note_links", 10),
    ("related_notes", 5),
    ("list_vaults", 5),
]


def plan(rng: random.Random, titles: list[str], calls: int) -> list[tuple[str, dict[str, Any]]]:
    tools = [t for t, w in MIX for _ in range(w)]
    out = []
    for _ in range(calls):
        tool = rng.choice(tools)
        title = rng.choice(titles)
        words = " ".join(
            rng.sample(title.replace("-", " ").split(), k=min(2, len(title.split("-" if "-" in title else " "))))
        )
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


async def agent(
    url: str, token: str, calls: list[tuple[str, dict[str, Any]]], times: dict[str, list[float]], errors: Counter[str]
) -> None:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        async with (
            streamable_http_client(url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as client,
        ):
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

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_notes", "arguments": {"query": "release checklist", "k": 3}},
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}

    async def run() -> Counter[str]:
        outcomes: Counter[str] = Counter()
        async with httpx.AsyncClient(
            timeout=120, limits=httpx.Limits(max_connections=n, max_keepalive_connections=0)
        ) as client:

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
                outcomes[
                    "busy"
                    if result.get("isError") and "busy" in result["content"][0]["text"]
                    else "error"
                    if result.get("isError")
                    else "ok"
                ] += 1

            async with anyio.create_task_group() as tg:
                for _ in range(n):
                    tg.start_soon(one)
        return outcomes

    return anyio.run(run)


def prepare(home: Path, notes: int, vectors: str) -> tuple[Path, float]:
    """The vault and its index; `vectors` is "model" (the real MiniLM), "random" or "none".

    "random": the keyword index for real, then seeded random unit vectors for every chunk, as
    bench_query.py and bench_memory.py do (embedding 10k notes with the model takes hours on
    2 cores; a search costs the same whatever the vectors mean). Queries are still embedded by
    the real model, so search, ask and related go through the hybrid path.
    """
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
    engine.sync(embed=vectors == "model")
    if vectors == "random" and not _has_vectors(engine):
        from bench_query import fill_random_vectors

        fill_random_vectors(engine, "synth")
        vv = engine.vectors_for("synth")
        assert vv is not None
        vv.dirty = True
        engine.flush(["synth"])
    engine.close()
    return vault, time.perf_counter() - started


def _has_vectors(engine: Any) -> bool:
    vv = engine.vectors_for("synth")
    return vv is not None and len(vv.index) > 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--notes", type=int, default=1000)
    p.add_argument("--agents", type=int, default=8)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--burst", type=int, default=1000)
    vec = p.add_mutually_exclusive_group()
    vec.add_argument("--no-embed", action="store_true", help="keyword index only (hybrid falls back to keyword)")
    vec.add_argument(
        "--random-vectors",
        action="store_true",
        help="seeded random unit vectors for the notes (queries: the real model)",
    )
    p.add_argument("--work", type=Path, default=None, help="folder for the vault and index (kept between runs)")
    p.add_argument(
        "--prepare-only",
        action="store_true",
        help="build the vault and index in --work, then stop (run it at low priority)",
    )
    p.add_argument("--slots", type=int, default=0, help="engine calls at once (default: the server's own CallLimits)")
    p.add_argument("--thread-nice", type=int, default=0, help="the server's threads this much nicer than the UI thread")
    p.add_argument("--no-turns", action="store_true", help="tool workers run Python side by side (before python_turns)")
    p.add_argument("--no-stdio", action="store_true", help="skip the stdio server's memory (a latency-only run)")
    p.add_argument("--serve-child", type=Path, default=None, help=argparse.SUPPRESS)
    p.add_argument(
        "--bare-interpreter",
        action="store_true",
        help="the server process without the app's interpreter set-up (switch interval, frozen heap): as measured before",
    )
    return p


class ServerChild:
    """The server process (`serve_child`), driven over its stdin: reset the clock, report, quit."""

    def __init__(self, home: Path, agents: int, bare: bool, slots: int, thread_nice: int, turns: bool) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "ORT_DISABLE_TELEMETRY": "1", "QT_QPA_PLATFORM": "offscreen"}
        child_args = [
            "--serve-child",
            str(home),
            "--agents",
            str(agents),
            "--slots",
            str(slots),
            "--thread-nice",
            str(thread_nice),
        ]
        child_args += ["--bare-interpreter"] if bare else []
        child_args += [] if turns else ["--no-turns"]
        self.proc = subprocess.Popen(
            [sys.executable, __file__, *child_args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        self.hello: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        return dict(json.loads(self.proc.stdout.readline()))

    def ask(self, cmd: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._read()

    def measure(self, what: Any) -> tuple[Any, dict[str, Any]]:
        """Run `what()` with the UI clock reset first; its result and the clock's report after."""
        self.ask("reset")
        out = what()
        return out, self.ask("rss")

    def quit(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.flush()
        self.proc.wait(60)


def run_agents(
    url: str, tokens: list[str], titles: list[str], calls: int
) -> tuple[dict[str, list[float]], Counter[str], float]:
    """All agents at once; per-tool latencies, errors and the wall time."""
    import anyio

    times: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()

    async def all_agents() -> None:
        async with anyio.create_task_group() as tg:
            for i, token in enumerate(tokens):
                tg.start_soon(agent, url, token, plan(random.Random(i), titles, calls), times, errors)

    started = time.perf_counter()
    anyio.run(all_agents)
    return times, errors, time.perf_counter() - started


def _clock(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "rss_on"}


def main() -> int:
    args = _parser().parse_args()
    if args.serve_child:
        serve_child(
            args.serve_child,
            args.agents,
            as_app=not args.bare_interpreter,
            slots=args.slots,
            thread_nice=args.thread_nice,
            turns=not args.no_turns,
        )
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="cairn-bench-agents-"))
    home = work / "home"
    vectors = "none" if args.no_embed else "random" if args.random_vectors else "model"
    vault, index_s = prepare(home, args.notes, vectors)
    if args.prepare_only:
        print(json.dumps({"work": str(work), "index_s": round(index_s, 1)}))
        return 0
    child = ServerChild(home, args.agents, args.bare_interpreter, args.slots, args.thread_nice, not args.no_turns)
    url, tokens = child.hello["url"], child.hello["tokens"]
    # The idle server first: the UI timer with nobody calling (the machine's own noise).
    _, idle = child.measure(lambda: time.sleep(3))
    (times, errors, wall), after_load = child.measure(lambda: run_agents(url, tokens, titles_of(vault), args.calls))
    outcomes, during_burst = child.measure(lambda: burst(url, tokens[0], args.burst) if args.burst else Counter())
    after_burst = burst(url, tokens[0], 1)
    child.quit()
    stdio = 0.0 if args.no_stdio else stdio_rss(home)
    name = (
        "bench_agents"
        + {"none": "_keyword", "random": "_random_vectors", "model": ""}[vectors]
        + ("_bare" if args.bare_interpreter else "")
    )
    result = {
        "notes": args.notes,
        "vectors": vectors,
        "index_s": round(index_s, 1),
        "agents": args.agents,
        "calls_per_agent": args.calls,
        "wall_s": round(wall, 1),
        "calls": sum(len(v) for v in times.values()),
        "errors": dict(errors),
        "per_tool": {t: summary_ms(v) for t, v in sorted(times.items())},
        "burst": dict(outcomes),
        "serves_after_burst": after_burst.get("ok", 0) == 1,
        "rss_server_off_mib": child.hello["rss_off"]["VmRSS"],
        "rss_server_on_idle_mib": child.hello["rss_on_idle"]["VmRSS"],
        "rss_server_on_mib": after_load["rss_on"]["VmRSS"],
        "peak_rss_server_mib": after_load["rss_on"]["VmHWM"],
        "rss_one_stdio_server_mib": stdio,
        "ui_idle": _clock(idle),
        "ui_during_load": _clock(after_load),
        "ui_during_burst": _clock(during_burst),
        "load_average": os.getloadavg()[0],
        "as_app": not args.bare_interpreter,
        "slots": args.slots or "default",
        "thread_nice": args.thread_nice,
        "python_turns": not args.no_turns,
    }
    print(json.dumps(result, indent=2))
    write_result(name, result)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
