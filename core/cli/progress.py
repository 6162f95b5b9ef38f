"""A progress line on stderr: redrawn in place on a terminal, sparse lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from core.base.eta import time_left


class ProgressLine:
    def __init__(self, label: str, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0
        self._last_phase = ""
        self._phase_start: tuple[str, float, int] | None = None  # phase, when it started, done then
        self.clock = time.monotonic  # tests step it

    def __call__(self, done: int, total: int, phase: str) -> None:
        if self.quiet:
            return
        now = self.clock()
        if self._phase_start is None or self._phase_start[0] != phase:
            self._phase_start = (phase, now, done)  # a resumed phase starts part done: time only what is new
        final = done >= total
        if not final and phase == self._last_phase and now - self._last < (0.1 if self._tty else 2.0):
            return
        self._last, self._last_phase = now, phase
        pct = 100 * done // total if total else 100
        left = time_left(done - self._phase_start[2], now - self._phase_start[1], total - done)
        text = f"{self.label}: {phase} {done}/{total} ({pct}%)" + (f", {left}" if left else "")
        if self._tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
