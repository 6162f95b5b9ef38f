"""The time-left estimate shown while indexing (status bar and CLI)."""

from __future__ import annotations

import pytest

from core.base.eta import RateMeter, time_left


def test_time_left_waits_for_a_rate_then_rounds_for_people() -> None:
    assert time_left(10, 2.0, 1000) == ""  # too early: the first batches load the model
    assert time_left(0, 30.0, 1000) == ""  # nothing done yet
    assert time_left(100, 30.0, 0) == ""  # finished
    assert time_left(100, 10.0, 300) == "less than a minute left"  # 30 s
    assert time_left(100, 10.0, 6000) == "about 10 min left"
    assert time_left(29, 30.0, 29190 - 29) == "about 8.4 h left"  # a 10k-note vault on a slow machine


def test_the_cli_progress_line_adds_the_time_left_once_it_has_a_rate() -> None:
    import io

    from core.cli.progress import ProgressLine

    out = io.StringIO()
    line = ProgressLine("notes", stream=out)
    now = [0.0]
    line.clock = lambda: now[0]
    line(200, 1000, "embedding")  # resumed: 200 from the cache
    now[0] = 20.0
    line(300, 1000, "embedding")  # 100 in 20 s, 700 to go: 140 s
    now[0] = 21.0
    line(50, 100, "keyword")  # another phase times itself afresh (and is not throttled: the phase changed)
    assert out.getvalue().splitlines() == [
        "notes: embedding 200/1000 (20%)",
        "notes: embedding 300/1000 (30%), about 2 min left",
        "notes: keyword 50/100 (50%)",
    ]


def test_rate_meter_estimates_from_the_measured_recent_rate() -> None:
    meter = RateMeter(window_s=60.0)
    meter.add(0.0, 0)
    meter.add(2.0, 10)
    assert meter.time_left(990) == ""  # under ETA_AFTER_S of progress: the model may still be loading
    meter.add(30.0, 100)  # a slow start: 100 in 30 s
    for t in range(40, 150, 10):  # then a steady 10 a second
        meter.add(float(t), 100 + (t - 30) * 10)
    assert meter.rate() == pytest.approx(10.0)  # the slow start has left the window
    assert meter.seconds_left(600) == pytest.approx(60.0)
    assert meter.time_left(600) == "about 1 min left"
    assert meter.time_left(6000) == "about 10 min left"  # falls as the job goes on, from the same rate


def test_rate_meter_starts_over_when_a_new_pass_begins() -> None:
    meter = RateMeter()
    meter.add(0.0, 500)
    meter.add(10.0, 600)
    meter.add(11.0, 5)  # a new phase counts from zero
    assert meter.rate() == 0.0 and meter.time_left(100) == ""
