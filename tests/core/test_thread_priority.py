"""Server threads made nicer than the UI thread: per thread on Linux, once, never the caller's siblings."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

import pytest

from core.base.thread_priority import lower_this_thread

T = TypeVar("T")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread niceness is Linux's")


def in_thread(fn: Callable[[], T]) -> list[T]:
    out: list[T] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out


@linux_only
def test_only_the_calling_thread_is_lowered_and_only_once() -> None:
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def work() -> tuple[bool, int, bool, int]:
        tid = threading.get_native_id()
        first = lower_this_thread(3)
        after_first = os.getpriority(os.PRIO_PROCESS, tid)
        second = lower_this_thread(3)
        return first, after_first, second, os.getpriority(os.PRIO_PROCESS, tid)

    [(first, after_first, second, after_second)] = in_thread(work)
    assert first is True and after_first == min(19, before + 3)
    assert second is False and after_second == after_first  # a pooled thread is lowered once, not again per call
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before  # this (the "UI") thread untouched


def test_zero_or_negative_does_nothing() -> None:
    assert in_thread(lambda: lower_this_thread(0)) == [False]
    assert in_thread(lambda: lower_this_thread(-5)) == [False]


def test_elsewhere_nothing_is_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert in_thread(lambda: lower_this_thread(3)) == [False]
