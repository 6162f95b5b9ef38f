"""Attachments' text taken out ahead of the indexer, while it reads the notes.

A first index reads the notes first and the attachments last, one at a time, each waiting
for the extractor's child process: on simonw-til (578 notes, 12 web pages) the child's
start and the pages came after everything else, a tail of their own. Here a thread hands
the new attachments to the child as soon as the pass starts, in the order the indexer will
ask for them, and keeps each answer until it is asked for; the notes are indexed meanwhile.

Only one thread ever talks to the extractor (a pass's other extractions queue behind the
ones ahead), and what is taken out ahead is bounded by the files' size (`AHEAD_BYTES`):
their texts wait in memory until the indexer reaches them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.vault.extractor import ExtractionFailure, PdfExtractor
    from core.vault.kinds import KindText

AHEAD_BYTES = 64 * 1024 * 1024  # files taken out ahead, by size on disk: their texts are held until read
WAIT_SLICE_S = 0.1  # how often a wait for an answer looks at the cancel flag


class ExtractAhead:
    """`PdfExtractor.extract` for one pass, with the given files started ahead. Close it to stop."""

    def __init__(self, extractor: Callable[[], PdfExtractor]) -> None:
        self._extractor = extractor
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-extract-ahead")
        self._halt = threading.Event()  # set on close or cancel: the running extraction stops at once
        self._ahead: dict[Path, Future[KindText | ExtractionFailure]] = {}

    def start(self, files: Iterable[tuple[Path, int]], budget: int = AHEAD_BYTES) -> None:
        """Queue these (path, size) files in order, while their sizes fit in `budget`."""
        for path, size in files:
            if size > budget:
                break
            budget -= size
            self._ahead[path] = self._pool.submit(self._run, path)

    def _run(self, path: Path) -> KindText | ExtractionFailure:
        return self._extractor().extract(path, self._halt)

    def extract(self, path: Path, cancel: threading.Event | None = None) -> KindText | ExtractionFailure:
        """The file's text or why not: the answer taken out ahead, or taken out now."""
        future = self._ahead.pop(path, None) or self._pool.submit(self._run, path)
        while True:
            try:
                return future.result(timeout=WAIT_SLICE_S)
            except FutureTimeout:
                if cancel is not None and cancel.is_set():
                    self._halt.set()

    def close(self) -> None:
        """Stop the extraction under way and drop what was not asked for."""
        self._halt.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._ahead.clear()
