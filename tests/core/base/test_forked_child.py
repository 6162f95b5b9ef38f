"""The CLI's forked worker without multiprocessing: a real fork, real pipes, a child killed mid-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.base.forked_child import Channel, fork_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork exists on Linux and macOS only")
REPO = Path(__file__).resolve().parents[3]


def echo(conn: Channel) -> None:
    """Answer every message with itself until the parent's end closes."""
    while True:
        try:
            got = conn.recv()
        except EOFError:
            return
        conn.send(got)


def fail(conn: Channel) -> None:
    raise RuntimeError("the child's own failure")


def test_messages_of_any_size_go_both_ways_and_the_child_ends_with_the_pipe() -> None:
    process, conn = fork_child("cairn-echo", echo, first=("setup", list(range(10))))
    try:
        assert conn.recv() == ("setup", list(range(10)))  # held by the child from the fork on, echoed
        big = {"notes": ["x" * 1000] * 3000, "bytes": os.urandom(1 << 20)}  # bigger than a pipe's buffer
        for message in (1, "two", big, (3, None)):
            conn.send(message)
            assert conn.recv() == message
        assert not conn.poll(0.0)
        conn.send(4)
        assert conn.poll(5.0) and conn.recv() == 4
    finally:
        conn.close()
    process.join(timeout=30)
    assert process.exitcode == 0 and not process.is_alive()  # it saw the end of its pipe and returned


def test_a_killed_child_ends_the_channel_and_is_reaped() -> None:
    process, conn = fork_child("cairn-echo", echo)
    conn.send("alive?")
    assert conn.recv() == "alive?"
    assert process.is_alive()
    os.kill(process.pid, signal.SIGKILL)  # as the system would (out of memory)
    with pytest.raises(EOFError):
        conn.recv()
    process.join()
    assert process.exitcode == -signal.SIGKILL and not process.is_alive()
    with pytest.raises(OSError):  # noqa: PT012 - a send may fill the pipe before it sees the reader gone
        for _ in range(3):
            conn.send(b"x" * (2 << 20))
    process.kill()  # already reaped: nothing happens
    conn.close()
    conn.close()
    with pytest.raises(OSError):
        conn.send(1)


def test_kill_and_join_stop_a_child_mid_way() -> None:
    process, conn = fork_child("cairn-echo", echo)
    process.join(timeout=0.05)
    assert process.is_alive() and process.exitcode is None  # a join that times out leaves it running
    process.kill()
    process.join()
    conn.close()
    assert process.exitcode == -signal.SIGKILL


def test_a_failing_child_says_why_and_exits_1() -> None:
    probe = (
        "from core.base.forked_child import fork_child\n"
        "from tests.core.base.test_forked_child import fail\n"
        "process, conn = fork_child('cairn-fail', fail)\n"
        "process.join()\n"
        "print(process.exitcode)\n"
    )
    done = _run(probe)
    assert done.stdout == "1\n" and "the child's own failure" in done.stderr


def test_the_forked_worker_imports_nothing_of_multiprocessing() -> None:
    """What `cairn index` runs on Linux: the verdict, a fork, a round trip, the stop."""
    probe = (
        "import sys\n"
        "from core.base import spare_core as sc\n"
        "sc.spare_core = lambda **_: True\n"
        "sc.prestart('tests.core.base.test_forked_child:echo', 'cairn-echo', fork_later=True)\n"
        "assert isinstance(sc.take('tests.core.base.test_forked_child:echo'), sc.ForkLater)\n"
        "started = sc.start_child('tests.core.base.test_forked_child:echo', 'cairn-echo', forked=True, first='setup')\n"
        "assert started.primed and started.conn.recv() == 'setup'\n"
        "started.stop()\n"
        "print(started.process.exitcode, sorted(m for m in sys.modules if m.startswith('multiprocessing')))\n"
    )
    done = _run(probe)
    assert done.stdout == f"{-signal.SIGKILL} []\n", done.stderr


def _run(probe: str) -> Any:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert time.monotonic() - t0 < 60
    return done


def test_primed_messages_come_first_in_order_then_the_pipes() -> None:
    read_fd, write_fd = os.pipe()
    loop = Channel(read_fd, write_fd)  # what it sends, it reads back
    loop.prime("setup")
    loop.prime(0)
    loop.send({"claim": 1})
    assert loop.poll() and [loop.recv() for _ in range(3)] == ["setup", 0, {"claim": 1}]
    assert not loop.poll()
    loop.close()
