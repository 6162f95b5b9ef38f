"""How long a long job has left, in words, from its own rate so far (the app's status bar, the CLI's progress line)."""

from __future__ import annotations

#: Seconds of progress before a time-left estimate is shown: the first batches include loading the model.
ETA_AFTER_S = 5.0


def time_left(progressed: int, elapsed_s: float, remaining: int) -> str:
    """A rough "about 12 min left" from the rate so far; empty while there is too little to go on."""
    if elapsed_s < ETA_AFTER_S or progressed <= 0 or remaining <= 0:
        return ""
    seconds = remaining * elapsed_s / progressed
    if seconds < 60:
        return "less than a minute left"
    if seconds < 90 * 60:
        return f"about {max(1, round(seconds / 60))} min left"
    return f"about {seconds / 3600:.1f} h left"
