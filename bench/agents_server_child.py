"""The server side of bench_agents.py: the shared server in a process of its own, as the app runs it,
with a stand-in for the app's UI thread whose lateness is the stall; and one stdio server's memory."""

from __future__ import annotations

import gc
import json
import mmap
import os
import struct
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import REPO

WARM_QUERIES = ["backup schedule for the server", "release checklist", "garden recipe tomatoes", "travel hotel invoice"]


def titles_of(vault: Path) -> list[str]:
    return sorted(p.stem for p in vault.rglob("*.md"))


def rss_mib(pid: int | str = "self") -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


# -- the server process ----------------------------------------------------------------------


class GcTimes:
    """How long each cyclic-GC pass held the GIL, per generation (a pass is one C call: a stall):
    wall time, and the pass's own CPU time (the rest of the wall time it was waiting for a core)."""

    def __init__(self) -> None:
        self.started = (0.0, 0.0)
        self.passes: dict[int, list[tuple[float, float]]] = defaultdict(list)
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = time.perf_counter() - self.started[0], time.thread_time() - self.started[1]
            self.passes[info["generation"]].append((wall * 1000, cpu * 1000))

    def report(self) -> dict[str, dict[str, float]]:
        return {
            f"gen{g}": {
                "n": len(v),
                "max_ms": round(max(w for w, _ in v), 1),
                "max_cpu_ms": round(max(c for _, c in v), 1),
                "total_ms": round(sum(w for w, _ in v), 1),
            }
            for g, v in sorted(self.passes.items())
            if v
        }

    def clear(self) -> None:
        self.passes.clear()


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


class StallNamer:
    """Names what ran while the GIL was held long (`--name-stalls`; it costs the server some CPU).

    A thread sleeps 2 ms at a time; when it wakes much later than that, some other thread held the
    GIL (or the cores were all busy) meanwhile. The other threads' innermost frames at that moment
    mostly still point at the call that just returned, i.e. at what held the GIL."""

    def __init__(self, late_ms: float = 30.0) -> None:
        self.late_ms = late_ms
        self.seen: list[tuple[float, float, list[str]]] = []
        threading.Thread(target=self._run, name="stall-namer", daemon=True).start()

    def _run(self) -> None:
        me = threading.get_ident()
        while True:
            started, waited = time.perf_counter(), _runqueue_wait_ms()
            time.sleep(0.002)
            late = (time.perf_counter() - started) * 1000 - 2
            if late > self.late_ms:
                stacks = [_where(f) for tid, f in sys._current_frames().items() if tid != me]
                self.seen.append((round(late, 1), round(_runqueue_wait_ms() - waited, 1), stacks))

    def report(self) -> list[tuple[float, float, list[str]]]:
        return sorted(self.seen, reverse=True)[:6]


class Heartbeat:
    """The UI thread's last tick as a wall-clock time in a shared file (`CAIRN_BENCH_HEARTBEAT=FILE`),
    for `bench/gil_watch.py`: another process that needs no GIL of ours sees the tick go stale and
    has py-spy dump every thread *during* the stall, so the thread holding the GIL is caught at it.
    Each stall's lateness goes to FILE.stalls with its end time, to match the dumps."""

    def __init__(self, path: str) -> None:
        with open(path, "wb") as f:
            f.write(struct.pack("d", time.time()))
        self.fd = os.open(path, os.O_RDWR)
        self.map = mmap.mmap(self.fd, 8)
        self.log = open(path + ".stalls", "w")  # noqa: SIM115 - open for the life of the process

    def tick(self, late: float, runqueue_ms: float) -> None:
        now = time.time()
        self.map[:8] = struct.pack("d", now)
        if late > 20:
            self.log.write(f"{now:.4f} late={late:.1f} runqueue={runqueue_ms:.1f}\n")
            self.log.flush()


def _where(frame: Any) -> str:
    parts: list[str] = []
    while frame is not None and len(parts) < 4:
        code = frame.f_code
        parts.append(f"{Path(code.co_filename).name}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return " < ".join(parts)


def _turn_stats() -> dict[str, Any]:
    from core.base.python_turns import python_turns

    stats = python_turns().stats
    return {"taken": stats.taken, "impatient": stats.impatient, "pauses": stats.pauses, "last_impatient": stats.last_impatient}


def _runqueue_wait_ms() -> float:
    """Time this thread has spent runnable but not running (waiting for a CPU), from the kernel."""
    try:
        return int(Path(f"/proc/self/task/{threading.get_native_id()}/schedstat").read_text().split()[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return 0.0


class UiClock:
    """The app's UI thread, stood in for: a 10 ms Qt timer on the main thread, and how late it fires
    (a tick late by more than the frame budget is a stall the user would see), with the GC passes."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.lateness: list[float] = []
        self.stalls: list[tuple[float, float]] = []
        self.last = time.perf_counter()
        self.waited = _runqueue_wait_ms()
        self.namer = StallNamer() if os.environ.get("CAIRN_BENCH_NAME_STALLS") else None
        self.beat = Heartbeat(os.environ["CAIRN_BENCH_HEARTBEAT"]) if os.environ.get("CAIRN_BENCH_HEARTBEAT") else None
        self.gc_times = GcTimes()
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now, waited = time.perf_counter(), _runqueue_wait_ms()
        late = max(0.0, (now - self.last) * 1000 - 10)
        self.lateness.append(late)
        if late > 20:  # a stall: how much of it this thread spent runnable but waiting for a core (the OS, not the GIL)
            self.stalls.append((round(late, 1), round(waited - self.waited, 1)))
        if self.beat is not None:
            self.beat.tick(late, waited - self.waited)
        self.last, self.waited = now, waited

    def reset(self) -> None:
        self.lateness.clear()
        self.stalls.clear()
        if self.namer is not None:
            self.namer.seen.clear()
        self.gc_times.clear()

    def report(self) -> dict[str, Any]:
        named = {"named_stalls": self.namer.report()} if self.namer is not None else {}
        worst = sorted(self.lateness)
        return {
            "ui_max_late_ms": round(worst[-1], 1) if worst else 0.0,
            "ui_p99_late_ms": round(worst[int(len(worst) * 0.99)], 1) if worst else 0.0,
            "ticks": len(worst),
            # The worst stalls as (ms late, ms of it waiting for a core); the rest is the GIL or the thread's own work.
            "worst_stalls": sorted(self.stalls, reverse=True)[:8],
            "gc": self.gc_times.report(),
            "frozen_objects": gc.get_freeze_count(),
            "python_turns": _turn_stats(),
            **named,
        }


def serve_child(
    home: Path, n_agents: int, as_app: bool = True, slots: int = 0, thread_nice: int = 0, turns: bool = True
) -> None:
    """Engine warm, RSS (off), server on, tokens out; then answer 'rss' / 'quit' on stdin.

    `as_app`: the interpreter set up as the app sets it up (`desktop.app.main`): a 1 ms GIL
    switch interval, the startup heap frozen, later loads frozen after their first full GC pass.
    """
    from PySide6.QtCore import QCoreApplication

    from core.agents.runner import AgentService, ServerOptions
    from core.agents.scope import Scope
    from core.agents.server import CallLimits
    from core.base.gc_pause import freeze_slow_survivors
    from core.base.paths import AppPaths
    from core.engine import Engine
    from desktop.app import freeze_startup_heap, tune_interpreter

    if as_app:
        tune_interpreter()
        freeze_startup_heap()
        freeze_slow_survivors()
    paths = AppPaths(home)
    engine = Engine(paths)
    warm_up(engine, home)
    off = rss_mib()
    limits = CallLimits(max_parallel=slots or CallLimits().max_parallel, thread_nice=thread_nice, take_turns=turns)
    options = ServerOptions(port=0, limits=limits)
    service = AgentService(paths, lambda: engine, options)
    tokens = []
    for i in range(n_agents):
        agent = f"bench{i}-{os.getpid()}"
        tokens.append(service.store.add(agent, Scope(internal=True, rate=0))[1])
    service.start()
    service.wait_running()
    on_idle = rss_mib()
    app = QCoreApplication([])
    clock = UiClock()
    print(json.dumps({"url": service.url, "tokens": tokens, "rss_off": off, "rss_on_idle": on_idle}), flush=True)

    def control() -> None:
        for line in sys.stdin:
            cmd = line.strip()
            if cmd == "reset":
                clock.reset()
                print(json.dumps({"ok": True}), flush=True)
            elif cmd == "rss":
                print(json.dumps({"rss_on": rss_mib(), **clock.report()}), flush=True)
            elif cmd == "quit":
                break
        service.stop()
        for name in [f"bench{i}-{os.getpid()}" for i in range(n_agents)]:
            service.store.revoke(name)
        app.quit()

    threading.Thread(target=control, daemon=True).start()
    app.exec()


def stdio_rss(home: Path) -> float:
    """RSS of one `cairn mcp --no-bridge` after the same warm-up searches (what each stdio agent costs)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {
        "CAIRN_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "ORT_DISABLE_TELEMETRY": "1",
        "PATH": os.environ.get("PATH", ""),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "core.cli.main", "mcp", "--no-bridge"], env=env, cwd=str(REPO)
    )

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
            ppid = int(
                next(line.split()[1] for line in (d / "status").read_text().splitlines() if line.startswith("PPid:"))
            )
        except (OSError, StopIteration, ValueError):
            continue
        if needle in cmd and ppid == me:
            found.append(int(d.name))
    return max(found) if found else None
