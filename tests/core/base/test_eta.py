"""The time-left estimate shown while indexing (status bar and CLI)."""

from __future__ import annotations

from core.base.eta import time_left


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
