"""`cairn index` starts the parallel build's worker first thing, beside its own imports.

The worker (`core.index.parallel_build`) is a spawned interpreter that needs ~0.3 s of
imports before its first job; the CLI needs ~0.2 s of its own before it knows the jobs.
Started here, before those imports, the two overlap (`core.base.spare_core.prestart`). Only
for folders that hold enough notes for a build to use a worker at all, counted here without
the scanner (whose imports are what this overlaps): the build decides on the scan's own
count, and stops a worker it does not use.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from core.base.spare_core import PARALLEL_MIN_NOTES, discard, prestart

TARGET = "core.index.parallel_build:serve"  # core.index.parallel_build.WORKER_TARGET (importing it costs Whoosh)
NAME = "cairn-segment-worker"
NOTE_SUFFIXES = (".md", ".markdown")


def notes_at_least(folders: Iterable[str], limit: int) -> bool:
    """Whether the folders hold `limit` notes or more (hidden folders left out, as the scanner does);
    stops counting at `limit`."""
    found = 0
    for folder in folders:
        if not os.path.isdir(folder):
            continue  # a vault given by name: no estimate, no early worker
        for _, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += sum(1 for name in files if name.lower().endswith(NOTE_SUFFIXES))
            if found >= limit:
                return True
    return False


def start_early(folders: Iterable[str]) -> None:
    """Start the worker now if the folders may need one and a core is spare."""
    if notes_at_least(folders, PARALLEL_MIN_NOTES):
        prestart(TARGET, NAME)


def stop_unused() -> None:
    """Stop the early worker if no build took it."""
    discard(TARGET)
