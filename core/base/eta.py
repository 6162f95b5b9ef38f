"""How long a long job has left, in words, from its own rate so far (the app's status bar, the CLI's progress line)."""

from __future__ import annotations

#: Seconds of progress before a time-left estimate is shown: the first batches include loading the model.
ETA_AFTER_S = 5.0


def time_left(progressed: int, elapsed_s: float, remaining: int) -> str:
    """A rough "about 12 min left" from the rate so far; empty while there is too little to go on."""
    if elapsed_s < ETA_AFTER_S or progressed <= 0 or remaining <= 0:
        return ""
    return say_seconds(remaining * elapsed_s / progressed)


def say_seconds(seconds: float) -> str:
    """Seconds left as people say them: "less than a minute left", "about 12 min left"."""
    if seconds < 60:
        return "less than a minute left"
    if seconds < 90 * 60:
        return f"about {max(1, round(seconds / 60))} min left"
    return f"about {seconds / 3600:.1f} h left"


#: The rate is measured over this much recent time: long enough to smooth batches, short enough
#: that the model's start-up (slow first batches) stops counting once the job runs steadily.
RATE_WINDOW_S = 60.0


class RateMeter:
    """Measures a job's rate from its own recent progress and turns it into a time left.

    Fed `(when, done)` samples as progress arrives; the rate is the items done over the
    last `RATE_WINDOW_S` seconds (all of them while the job is younger), so the estimate
    falls as the job goes on instead of repeating a guess made at the start.
    """

    def __init__(self, window_s: float = RATE_WINDOW_S) -> None:
        self.window_s = window_s
        self._samples: list[tuple[float, int]] = []
        self._started: float | None = None

    def add(self, when: float, done: int) -> None:
        if self._started is None:
            self._started = when
        if self._samples and done < self._samples[-1][1]:  # a new pass started over: measure afresh
            self._samples.clear()
            self._started = when
        self._samples.append((when, done))
        while len(self._samples) > 2 and self._samples[1][0] < when - self.window_s:
            self._samples.pop(0)

    def rate(self) -> float:
        """Items per second over the window; 0.0 until there is a span to measure."""
        if len(self._samples) < 2:
            return 0.0
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 and d1 > d0 else 0.0

    def seconds_left(self, remaining: int) -> float | None:
        rate = self.rate()
        return remaining / rate if rate > 0 and remaining > 0 else None

    def time_left(self, remaining: int) -> str:
        """Like `time_left`, from the measured recent rate; empty until ETA_AFTER_S of progress."""
        if self._started is None or not self._samples or self._samples[-1][0] - self._started < ETA_AFTER_S:
            return ""
        seconds = self.seconds_left(remaining)
        return "" if seconds is None else say_seconds(seconds)
