"""`cairn index` starts the parallel build's worker first thing, beside its own imports.

The worker (`core.index.parallel_build`) is a spawned interpreter that needs ~0.3 s of
imports before its first job; the CLI needs ~0.2 s of its own before it knows the jobs.
Started here, before those imports, the two overlap (`core.base.spare_core.prestart`). Only
for folders not indexed yet whose notes are enough work for a build to use a worker at all, counted here
without the scanner (whose imports are what this overlaps): the build decides on the scan's
own notes, and stops a worker it does not use.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from core.base.spare_core import FORK_MIN_WORK_S, PARALLEL_MIN_WORK_S, discard, prestart, work_s

TARGET = "core.index.segment_worker:serve"  # core.index.parallel_build.WORKER_TARGET (importing it costs Whoosh)
NAME = "cairn-segment-worker"
NOTE_SUFFIXES = (".md", ".markdown")
MANIFEST = "manifest.json"  # core.index.index_open's name for a vault's manifest (importing it costs Whoosh)


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


def indexed_already(folder: str) -> bool:
    """Whether `folder` is a registered vault with an index on disk: a sync then reads the changed
    notes only, and a worker started for nothing cost a warm `cairn index` of simonw-til ~0.1 s."""
    from core.base.config import load_config  # both are what the command loads next anyway
    from core.base.paths import AppPaths

    paths = AppPaths.from_env()
    resolved = os.path.normcase(os.path.abspath(folder))
    for vault in load_config(paths).vaults:
        if os.path.normcase(vault.root) == resolved:
            return (paths.vault_dir(vault.name) / MANIFEST).exists()
    return False


def forks() -> bool:
    """Whether the worker is forked when the jobs are known rather than spawned now: on Linux, where
    a fork after the imports is ready in milliseconds (`core.base.spare_core.fork`)."""
    return sys.platform.startswith("linux")


def start_early(folders: Iterable[str]) -> None:
    """Start the worker now (or, where it is forked later, look for a spare core now) if the folders
    may need one (not indexed yet, enough work) and a core is spare."""
    new = [folder for folder in folders if os.path.isdir(folder) and not indexed_already(folder)]
    fork_later = forks()
    if enough_work(new, FORK_MIN_WORK_S if fork_later else PARALLEL_MIN_WORK_S):
        prestart(TARGET, NAME, fork_later=fork_later)


def stop_unused() -> None:
    """Stop the early worker if no build took it."""
    discard(TARGET)
