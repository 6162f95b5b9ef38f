"""`cairn index` starts the parallel build's worker first thing, beside its own imports.

The worker (`core.index.parallel_build`) is a spawned interpreter that needs ~0.3 s of
imports before its first job; the CLI needs ~0.2 s of its own before it knows the jobs.
Started here, before those imports, the two overlap (`core.base.spare_core.prestart`). Only
for folders whose notes are enough work for a build to use a worker at all, counted here
without the scanner (whose imports are what this overlaps): the build decides on the scan's
own notes, and stops a worker it does not use.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from core.base.spare_core import PARALLEL_MIN_WORK_S, discard, prestart, work_s

TARGET = "core.index.segment_worker:serve"  # core.index.parallel_build.WORKER_TARGET (importing it costs Whoosh)
NAME = "cairn-segment-worker"
NOTE_SUFFIXES = (".md", ".markdown")


def enough_work(folders: Iterable[str], min_work_s: float) -> bool:
    """Whether the folders' notes (hidden folders left out, as the scanner does) are at least
    `min_work_s` of indexing (`core.base.spare_core.work_s`); stops looking once they are."""
    notes = size = 0
    pending = [folder for folder in folders if os.path.isdir(folder)]  # a vault given by name: no estimate
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    elif entry.name.lower().endswith(NOTE_SUFFIXES):
                        notes += 1
                        size += entry.stat().st_size
        except OSError:
            continue  # unreadable: the scanner will say so
        if work_s(notes, size) >= min_work_s:
            return True
    return False


def start_early(folders: Iterable[str]) -> None:
    """Start the worker now if the folders may need one and a core is spare."""
    if enough_work(folders, PARALLEL_MIN_WORK_S):
        prestart(TARGET, NAME)


def stop_unused() -> None:
    """Stop the early worker if no build took it."""
    discard(TARGET)
