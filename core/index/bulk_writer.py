"""A keyword-index writer kept open across a pass: notes are analysed and filed as they come, and
one commit lists them with the segments another process built.

The parallel build (`core.index.parallel_build`) hands this process claims of a few notes each;
its notes go into this writer at once, so a claim costs its real work and the two processes stay
in step, and the pass ends with one table of contents holding this process's segment and the
worker's (`FastSegmentWriter.commit(extra_segments=...)`) instead of a commit per claim.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.base.gc_pause import gc_paused
from core.base.models import Document
from core.index.keyword_store import KeywordStore
from core.index.merge_policy import LIVE_MERGE_DOCS, tiered

if TYPE_CHECKING:
    from core.index.segment_worker import BuiltSegment


class BulkWriter:
    """One open writer on a vault's keyword index; it holds the index's write lock until it
    commits or is cancelled (either may be called once; both end it)."""

    def __init__(self, store: KeywordStore, lock: threading.Lock, directory: Path, committed: Callable[[], None]) -> None:
        lock.acquire()
        try:
            self._writer = store.writer()
        except BaseException:
            lock.release()
            raise
        self._lock = lock
        self._directory = directory
        self._committed = committed  # the index's searchers reopen on their next search
        self.is_open = True

    def add(self, doc: Document) -> None:
        """The note's chunks into the open segment. If it raises, the writer is to be cancelled
        (a note may be half filed): its notes go the way of `NoteIntake.commit_each`."""
        KeywordStore.add(self._writer, [doc])

    def flush_now(self) -> bool:
        """Write this writer's segment now (the postings sorted and written), where nothing is left
        to delete or merge: a first index, whose process then waits for the worker's last segment.
        Elsewhere the commit does it, after its deletions. Returns whether it wrote it."""
        if self._writer.segments:
            return False
        with gc_paused():
            self._writer.flush_now(tiered(LIVE_MERGE_DOCS))
        return True

    def commit(self, stale: Sequence[str], built: Sequence[BuiltSegment]) -> None:
        """One commit: the chunks of the `stale` notes deleted, the open segment and the `built` ones
        (their files moved into the index folder first: Whoosh deletes files no TOC names) listed."""
        try:
            with gc_paused():
                if stale and self._writer.segments:  # an index without segments has nothing to delete
                    KeywordStore.delete_notes(self._writer, stale)
                for segment in built:
                    KeywordStore.take_files(segment.files, segment.folder, self._directory)
                self._writer.commit(mergetype=tiered(LIVE_MERGE_DOCS), extra_segments=[b.segment for b in built])
        except BaseException:
            self.cancel()
            raise
        self._end()
        self._committed()

    def cancel(self) -> None:
        """Drop what this writer holds (a note broke it, or the pass stopped)."""
        if not self.is_open:
            return
        try:
            self._writer.cancel()
        except Exception:  # noqa: BLE001, S110 - a writer already closed by a failed commit: the lock is what matters
            pass
        finally:
            self._end()

    def _end(self) -> None:
        if self.is_open:
            self.is_open = False
            self._lock.release()
