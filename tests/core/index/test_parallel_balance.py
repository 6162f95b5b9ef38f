"""The parallel build's end: the two processes stop taking claims where their finishes (indexing what
each holds, then writing its segment) end together, not where the claims run out, and a worker
that dies meanwhile still gives back every claim whose segment has not arrived."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import core.index.parallel_build as pb
from core.index.segment_worker import DONE, FINISHED, IndexedNote


class Hand:
    """A worker whose answers the test hands in (`on_answer`, as the reader thread does), at a clock
    the test moves; it can be made gone."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.on_answer: Any = None
        self.gone = False

    def submit(self, index: int) -> None:
        self.asked.append(index)

    def wait(self, timeout: float) -> bool:
        return self.gone

    def answer(self) -> tuple[Any, ...] | None:
        return None

    def kill(self) -> None: ...

    def stop(self) -> None: ...


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [0.0]
    monkeypatch.setattr(pb, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


def _claims(count: int) -> list[Any]:
    return [[(f"n{i}.md", None)] for i in range(count)]


def _done(claim: int, chunks: int) -> tuple[Any, ...]:
    note = IndexedNote(f"n{claim}.md", SimpleNamespace(chunks=(None,) * chunks), (), (), ())  # type: ignore[arg-type]
    return (DONE, claim, [note])


def _notes(units: list[Any]) -> list[str]:
    return sorted(note for unit in units for note, _ in unit)


def test_a_worker_whose_finish_is_the_longer_takes_no_more_claims(tmp_path: Path, clock: list[float]) -> None:
    """The worker's open segment would take longer to write than this process takes to index the
    claims left and write its own: it is told to finish at once, and the claims left are indexed here."""
    hand = Hand()
    build = pb.ParallelBuild(hand, _claims(6), tmp_path, work=[1.0, 1.0, 1.0, 0.1, 0.1, 1.0])
    build.chunks_here = lambda: 10
    assert hand.asked == [0, 1]
    assert build._take_back() == 5
    clock[0] = 1.0
    assert build._take_back() == 4  # this process's pace: one unit a second
    hand.on_answer(_done(0, int(2 / pb.FLUSH_CHUNK_S)))  # the worker's too, with 2 s of finish a claim
    assert hand.asked == [0, 1, pb.FINISH]
    assert not build.waiting
    assert [build._take_back(), build._take_back(), build._take_back()] == [3, 2, None]
    assert build.waiting


def test_this_process_stops_taking_claims_where_its_finish_is_the_longer(tmp_path: Path, clock: list[float]) -> None:
    """This process holds the heavier segment: it takes no more claims (and writes its segment at
    once, `waiting`), and the worker is handed every claim left, then FINISH."""
    hand = Hand()
    build = pb.ParallelBuild(hand, _claims(6), tmp_path, work=[1.0] * 6)
    assert build._take_back() == 5
    clock[0] = 1.0
    hand.on_answer(_done(0, 10))
    assert hand.asked == [0, 1, 2]
    build.chunks_here = lambda: int(10 / pb.FLUSH_CHUNK_S)  # 10 s of finish
    assert build._take_back() is None
    assert build.waiting
    assert next(build._units()) == 0  # the caller is told at once (it writes its segment), not at the worker's next answer
    hand.on_answer(_done(1, 10))
    hand.on_answer(_done(2, 10))
    assert hand.asked == [0, 1, 2, 3, 4, pb.FINISH]


def test_a_worker_gone_after_this_process_stopped_gives_every_claim_back(tmp_path: Path, clock: list[float]) -> None:
    """Claims left for the worker after this process stopped taking them come back when it dies: those
    it held (their segment never came) and those it was not handed yet."""
    hand = Hand()
    build = pb.ParallelBuild(hand, _claims(6), tmp_path, work=[1.0] * 6)
    assert build._take_back() == 5
    clock[0] = 1.0
    hand.on_answer(_done(0, 10))
    build.chunks_here = lambda: int(10 / pb.FLUSH_CHUNK_S)  # 10 s of finish
    assert build._take_back() is None
    hand.gone = True
    units = list(build._units())
    assert _notes(units) == [f"n{i}.md" for i in range(5)]
    assert not build._jobs and not build._pending


def test_no_pace_no_rule(tmp_path: Path, clock: list[float]) -> None:
    """Until each process has finished a claim nothing prices the end: claims go as they always did
    (`AHEAD` to the worker, the last one's FINISH when none is left)."""
    hand = Hand()
    build = pb.ParallelBuild(hand, _claims(3), tmp_path)
    assert hand.asked == [0, 1]
    hand.on_answer((FINISHED, None, []))
    assert build._take_back() == 2
    assert hand.asked == [0, 1, pb.FINISH]


def test_a_worker_that_looked_slow_is_not_stopped_for_more_than_the_finishes_differ_by(tmp_path: Path, clock: list[float]) -> None:
    """A worker descheduled for a while looks slow for good (its pace is from the start): this process
    would end sooner taking all that is left, but the two segments to finish are alike, so the claims
    go on as they always did; a claim left here is never handed back."""
    hand = Hand()
    build = pb.ParallelBuild(hand, _claims(6), tmp_path, work=[1.0] * 6)
    build.chunks_here = lambda: 10
    assert build._take_back() == 5
    clock[0] = 1.0
    assert build._take_back() == 4
    clock[0] = 10.0
    hand.on_answer(_done(0, 10))
    assert hand.asked == [0, 1, 2]
