"""The server's threads give way to the app's UI thread: `CallLimits.thread_nice` (the event loop and tool
workers run nicer) and `CallLimits.take_turns` (tool workers run Python one at a time: no GIL convoy)."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from core.agents.runner import AgentService, ServerOptions
from core.agents.scope import Scope
from core.agents.server import CallLimits
from core.base.paths import AppPaths
from core.engine import Engine
from tests.core.agents.agent_helpers import make_vaults, run_session


def niceness(thread: threading.Thread) -> int:
    assert thread.native_id is not None
    return os.getpriority(os.PRIO_PROCESS, thread.native_id)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")
def test_server_threads_are_nicer_and_the_caller_is_not(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "home")
    engine = Engine(paths)
    for vault in make_vaults(tmp_path / "vaults"):
        engine.add_vault(vault)
    engine.sync(embed=False)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    before = set(threading.enumerate())  # workers of other tests' event loops are not this server's
    service = AgentService(paths, lambda: engine, ServerOptions(port=0, limits=CallLimits(thread_nice=4)))
    token = service.store.add("t", Scope(internal=True, rate=0))[1]
    service.start()
    try:
        assert service.wait_running(), service.error
        search = ("tool", ("search_notes", {"query": "garden plan", "mode": "keyword"}))
        out = anyio.run(run_session, service.url, token, {"s": search})
        assert not out["s"][0] and "Plan" in out["s"][1]
        threads = {t.name: t for t in threading.enumerate()}
        workers = [t for t in threading.enumerate() if t.name.startswith("AnyIO worker thread") and t not in before]
        assert workers, sorted(threads)
        expected = min(19, base + 4)
        assert {niceness(t) for t in workers} == {expected}  # the tool ran on a lowered worker
        assert niceness(threads["cairn-agents-http"]) == expected  # the event loop too
        assert (
            os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base
        )  # the caller (the UI thread) untouched
    finally:
        service.stop()
        engine.close()


def _most_at_once(tmp_path: Path, take_turns: bool) -> int:
    """Four searches from two agents at once on two engine slots: how many ran engine code together."""
    paths = AppPaths(tmp_path / "home")
    engine = Engine(paths)
    for vault in make_vaults(tmp_path / "vaults"):
        engine.add_vault(vault)
    engine.sync(embed=False)
    inside, most, lock = [0], [0], threading.Lock()
    search = engine.search

    def counted(*args: Any, **kwargs: Any) -> Any:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.2)  # lets the GIL go, as reading the index does: only the turn keeps the other out
            return search(*args, **kwargs)
        finally:
            with lock:
                inside[0] -= 1

    engine.search = counted  # type: ignore[method-assign]
    service = AgentService(
        paths, lambda: engine, ServerOptions(port=0, limits=CallLimits(max_parallel=2, take_turns=take_turns))
    )
    tokens = [service.store.add(name, Scope(internal=True, rate=0))[1] for name in ("a", "b")]
    service.start()
    try:
        assert service.wait_running(), service.error
        calls = {f"s{i}": ("tool", ("search_notes", {"query": "garden plan", "mode": "keyword"})) for i in range(2)}

        async def both() -> None:
            async with anyio.create_task_group() as tg:
                for token in tokens:
                    tg.start_soon(run_session, service.url, token, calls)

        anyio.run(both)
    finally:
        service.stop()
        engine.close()
    return most[0]


def test_tool_workers_take_turns_at_python(tmp_path: Path) -> None:
    """Two workers at Python at once starve the UI thread of the GIL (docs/benchmarks.md): with turns
    (the default) the second waits off the GIL; without them both run."""
    assert _most_at_once(tmp_path / "turns", take_turns=True) == 1
    assert _most_at_once(tmp_path / "free", take_turns=False) == 2
