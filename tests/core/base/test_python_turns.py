"""`PythonTurns`: background threads run Python one at a time, give the turn up around work outside
the GIL, and never wait on each other for good."""

from __future__ import annotations

import threading
import time

from core.base.python_turns import PythonTurns


def _run(*targets: object) -> None:
    threads = [threading.Thread(target=t) for t in targets]  # type: ignore[arg-type]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)


def test_one_thread_at_a_time_holds_the_turn() -> None:
    turns = PythonTurns()
    inside: list[int] = []
    most = [0]

    def worker() -> None:
        for _ in range(20):
            with turns.turn():
                inside.append(1)
                most[0] = max(most[0], len(inside))
                time.sleep(0.001)  # lets the GIL go: only the turn keeps the others out
                inside.pop()

    _run(worker, worker, worker)
    assert most[0] == 1
    assert turns.stats.taken == 60 and turns.stats.impatient == 0


def test_the_turn_is_reentrant_and_released_gives_it_to_another_thread() -> None:
    turns = PythonTurns()
    order: list[str] = []
    holder_in_released = threading.Event()
    other_done = threading.Event()

    def holder() -> None:
        with turns.turn(), turns.turn():  # nested: still one turn
            assert turns.holds_turn()
            with turns.released():  # e.g. model inference, outside the GIL
                assert not turns.holds_turn()
                holder_in_released.set()
                assert other_done.wait(5)  # the other thread got the turn meanwhile
                order.append("holder released")
            assert turns.holds_turn()
        assert not turns.holds_turn()

    def other() -> None:
        assert holder_in_released.wait(5)
        with turns.turn():
            order.append("other ran")
        other_done.set()

    _run(holder, other)
    assert order == ["other ran", "holder released"]


def test_released_outside_a_turn_does_nothing() -> None:
    turns = PythonTurns()
    with turns.released():
        assert not turns.holds_turn()
    assert turns.stats.taken == 0


def test_a_thread_waits_only_so_long_then_goes_ahead_and_says_where_the_holder_was() -> None:
    turns = PythonTurns(patience=0.2)
    holding = threading.Event()
    let_go = threading.Event()
    waited: list[float] = []

    def slow_holder() -> None:
        with turns.turn():
            holding.set()
            let_go.wait(5)

    def impatient() -> None:
        assert holding.wait(5)
        started = time.monotonic()
        with turns.turn():
            waited.append(time.monotonic() - started)
            assert not turns.holds_turn()  # went ahead without it
        let_go.set()

    _run(slow_holder, impatient)
    assert 0.15 < waited[0] < 2.0
    assert turns.stats.impatient == 1
    assert "slow_holder" in turns.stats.last_impatient  # the holder's stack, for the log
    with turns.turn():  # the holder gave its turn back: it is free again
        assert turns.holds_turn()


def test_a_holder_breathes_after_its_share_and_a_thread_without_the_turn_never_does() -> None:
    turns = PythonTurns()
    turns.share_s, turns.pause_s = 0.005, 0.0002

    def loop(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            turns.breathe()

    def holder() -> None:
        with turns.turn():
            loop(0.1)

    _run(holder)
    assert 2 <= turns.stats.pauses <= 21  # about one per 5 ms held (fewer when a sleep overshoots on a busy machine)
    before = turns.stats.pauses
    _run(lambda: loop(0.05))
    assert turns.stats.pauses == before
