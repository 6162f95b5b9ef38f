"""The GIL convoy in 30 lines: how late a thread ticking every 10 ms runs beside N threads at Python.

    python bench/bench_gil_convoy.py MODE N [SECONDS] [SWITCH_INTERVAL]

MODE "cpu": the threads run Python only; "io": each ~0.1 ms of Python is followed by a short call
that lets the GIL go (`zlib.decompress` of a small blob and an `os.stat`), as reading Whoosh's
stored fields does. CPython lets a waiting thread ask for the GIL only after a switch interval in
which no other thread took it, and each short release restarts that wait: with two or more "io"
threads the ticking thread (the app's UI thread) is starved (docs/benchmarks.md, #33), and often
with one. MODE "turns": as "io", but the threads take turns (`core.base.python_turns`) and call
`breathe()` each step, as the agents server's workers and its phrase-checking loops do.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.base.python_turns import python_turns  # noqa: E402


def main() -> int:
    mode, n = sys.argv[1], int(sys.argv[2])
    secs = float(sys.argv[3]) if len(sys.argv) > 3 else 4.0
    sys.setswitchinterval(float(sys.argv[4]) if len(sys.argv) > 4 else 0.001)  # as the app sets it
    blob = zlib.compress(os.urandom(200) * 5)
    stop = threading.Event()

    turns = python_turns()

    def steps() -> None:
        while not stop.is_set():
            x = 0
            for i in range(2000):  # ~0.1 ms of Python
                x += i * i
            if mode in ("io", "turns"):
                zlib.decompress(blob)
                os.stat("/")
            if mode == "turns":
                turns.breathe()

    def worker() -> None:
        if mode == "turns":
            with turns.turn():
                steps()
        else:
            steps()

    for _ in range(n):
        threading.Thread(target=worker, daemon=True).start()
    late: list[float] = []
    last = time.perf_counter()
    end = last + secs
    while last < end:
        time.sleep(0.01)
        now = time.perf_counter()
        late.append((now - last) * 1000 - 10)
        last = now
    stop.set()
    late.sort()
    print(f"{mode} {n} threads: worst {late[-1]:.1f} ms, p99 {late[int(len(late) * 0.99)]:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
