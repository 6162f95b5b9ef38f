"""A note path whose opening never ends: a parallel-build worker stuck mid-job, to be killed."""

from __future__ import annotations

import time
from pathlib import Path


class StuckPath:
    """Opening it (`os.fspath`) marks `started` and then sleeps: the job it is in never finishes.

    Picklable and importable from the worker (spawned processes import this module by name).
    """

    def __init__(self, started: Path, seconds: float = 60.0) -> None:
        self.started = str(started)
        self.seconds = seconds

    def __fspath__(self) -> str:
        Path(self.started).touch()
        time.sleep(self.seconds)
        return self.started
