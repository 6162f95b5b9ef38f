"""The spare-core window: what the prestart thread does meanwhile runs inside it, not before it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import core.base.spare_core as sc

FIRST = "cpu  1000 0 200 5000 100 0 0 0 0 0\n"
LATER = "cpu  1060 0 206 5130 110 0 0 0 0 0\n"  # 66 busy ticks of 206


def _clock(monkeypatch: pytest.MonkeyPatch, *readings: float) -> None:
    """`time.monotonic` as `busy_cores` reads it: the window's start, after `meanwhile`, the window's end."""
    values: Iterator[float] = iter(readings)
    monkeypatch.setattr(sc.time, "monotonic", lambda: next(values))


@pytest.fixture
def stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "stat"
    path.write_text(FIRST)
    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sc, "niced_yield", lambda: True)
    return path


def test_meanwhile_runs_between_the_samples_and_the_window_keeps_its_length(stat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[tuple[str, object]] = []

    def meanwhile() -> None:
        events.append(("meanwhile", stat.read_text()))

    def sleep(seconds: float) -> None:
        events.append(("sleep", seconds))
        stat.write_text(LATER)

    monkeypatch.setattr(sc.time, "sleep", sleep)
    _clock(monkeypatch, 100.0, 100.03, 100.05)  # meanwhile took 30 ms of the 50 ms window
    assert sc.busy_cores(0.05, stat, meanwhile=meanwhile) == pytest.approx(66 / 206 * 2)
    assert events[0] == ("meanwhile", FIRST)  # after the first sample
    assert events[1][0] == "sleep" and events[1][1] == pytest.approx(0.02)  # only the rest of the window
    assert len(events) == 2


def test_a_meanwhile_longer_than_the_window_adds_no_sleep(stat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        stat.write_text(LATER)

    monkeypatch.setattr(sc.time, "sleep", sleep)
    _clock(monkeypatch, 100.0, 100.08, 100.08)
    assert sc.busy_cores(0.05, stat, meanwhile=lambda: None) == pytest.approx(66 / 206 * 2)
    assert slept == [0.0]


def test_meanwhile_runs_once_also_where_the_machine_cannot_be_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[int] = []
    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sc.os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert sc.spare_core(meanwhile=lambda: ran.append(1)) in (True, False)  # this machine's answer
    ran.clear()
    assert sc.busy_cores(0.01, tmp_path / "no-such-stat", meanwhile=lambda: ran.append(1)) is None  # not Linux
    assert ran == [1]


def test_the_prestart_thread_imports_multiprocessing_inside_the_window_only_to_spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[bool, bool]] = []

    def spare_core(*, own: bool = False, meanwhile: object = None, asked: object = None) -> bool:
        seen.append((own, callable(meanwhile)))
        return False  # nothing spawned

    monkeypatch.setattr(sc, "spare_core", spare_core)
    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    sc.prestart("probe.module:serve", "cairn-probe", fork_later=True)
    assert sc.take("probe.module:serve") is None
    sc.prestart("probe.module:serve", "cairn-probe")
    assert sc.take("probe.module:serve") is None
    assert seen == [(True, False), (True, True)]  # a fork needs nothing of multiprocessing (core.base.forked_child)


def test_asking_for_the_verdict_ends_the_window_but_not_before_its_minimum(stat: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    waited: list[float] = []

    class Asked:
        def wait(self, timeout: float) -> bool:
            waited.append(timeout)
            return True  # `take` asked 10 ms into the window

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        stat.write_text(LATER)

    monkeypatch.setattr(sc.time, "sleep", sleep)
    _clock(monkeypatch, 100.0, 100.0, 100.01, 100.03)
    assert sc.busy_cores(0.05, stat, asked=Asked()) == pytest.approx(66 / 206 * 2)  # type: ignore[arg-type]
    assert waited == [pytest.approx(0.05)]
    assert slept == [pytest.approx(sc.MIN_WINDOW_S - 0.01)]  # the rest of the minimum only


def test_a_window_nobody_asks_about_runs_its_whole_length(stat: Path) -> None:
    import threading
    import time

    asked = threading.Event()
    t0 = time.monotonic()
    assert sc.busy_cores(0.05, stat, asked=asked) is None  # the file did not move: no verdict
    assert time.monotonic() - t0 >= 0.05
    asked.set()
    t0 = time.monotonic()
    sc.busy_cores(0.05, stat, asked=asked)
    assert sc.MIN_WINDOW_S <= time.monotonic() - t0 < 0.05


def test_take_ends_the_prestart_window_early(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    monkeypatch.setattr(sc.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(sc, "WINDOW_S", 5.0)
    monkeypatch.setattr(sc, "busy_cores", lambda **kw: (kw["asked"].wait(5.0), 0.0)[1])
    assert threading.active_count() >= 1
    sc.prestart("probe.module:serve", "cairn-probe", fork_later=True)
    t0 = time.monotonic()
    assert sc.take("probe.module:serve") == sc.ForkLater("probe.module:serve", "cairn-probe")
    assert time.monotonic() - t0 < 2.0
