"""`Aside`: a blocking call on its own thread, waited for (and its error raised) later."""

from __future__ import annotations

import threading
import time

import pytest

from core.base.aside import Aside


def test_the_call_runs_while_the_caller_goes_on() -> None:
    release = threading.Event()
    ran: list[str] = []

    def call() -> None:
        release.wait(5)
        ran.append("call")

    aside = Aside(call, "test-aside")
    ran.append("caller")  # the call is still waiting: the caller was not held up by it
    release.set()
    aside.join()
    assert ran == ["caller", "call"]


def test_join_raises_what_the_call_raised_once() -> None:
    def call() -> None:
        raise OSError("gone")

    aside = Aside(call, "test-aside")
    with pytest.raises(OSError, match="gone"):
        aside.join()
    aside.join()  # raised once: a second join (a finally after an except) is quiet


def test_without_a_thread_the_call_runs_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    ran: list[float] = []
    Aside(lambda: ran.append(time.monotonic()), "test-aside").join()
    assert len(ran) == 1
