"""`CallLimits.thread_nice`: the server's event loop and tool workers run nicer than the app's UI thread."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

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
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller (the UI thread) untouched
    finally:
        service.stop()
        engine.close()
