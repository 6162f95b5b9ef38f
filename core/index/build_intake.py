"""How a parallel build's work enters a vault's indexes: one open writer, one commit.

Beside `core.index.intake` (a note at a time, a batch committed by `commit_each`): with a
worker (`core.index.parallel_build`) the notes of this process's claims go into one open
writer as they are read (`core.index.bulk_writer`), so a claim here costs what it really
costs and the two processes keep in step; the worker's segments wait with it, and one
commit lists them all (or every `BATCH` notes on a big vault). The manifest and the link
graph take a note only once that commit holds its chunks. If the writer refuses a note, or
the commit fails, everything goes the in-process way instead: `commit_each`, note by note
where need be, the one bad note skipped with its reason (the worker's notes read again here
first: it sends what the manifest and link graph need of them, not the parsed notes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from core.base.atomic import make_private
from core.base.models import Document
from core.index.intake import BATCH
from core.index.manifest import FileRecord
from core.index.parallel_build import BuiltJob, work_units
from core.index.records import record_for
from core.index.segment_worker import IndexedNote
from core.vault.kinds import attachment_kind

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Sequence

    from core.index.bulk_writer import BulkWriter
    from core.index.intake import NoteIntake
    from core.index.parallel_build import ParallelBuild
    from core.index.segment_worker import BuiltSegment
    from core.index.sync_report import ProcessResult
    from core.vault.attachments import AttachmentReading
    from core.vault.scanner import ScanEntry

Worker = tuple["BuiltSegment | None", list[tuple["ScanEntry", IndexedNote]]]  # a worker's segment and its notes


class Pass(Protocol):
    """What a pass hands its work (`core.index.indexer._Pass`)."""

    @property
    def res(self) -> ProcessResult: ...
    @property
    def removed(self) -> list[str]: ...
    @property
    def reading(self) -> AttachmentReading: ...
    @property
    def writing(self) -> Callable[[], None]: ...
    @property
    def progress(self) -> Callable[[int, int, str], None] | None: ...
    @property
    def cancel(self) -> threading.Event | None: ...


class OneCommit:
    """What one commit of a parallel build will hold: this process's notes in an open writer, and
    the worker's segments with their notes."""

    def __init__(self, intake: NoteIntake, p: Pass) -> None:
        self._intake = intake
        self._p = p
        self._res = p.res
        self._removed = p.removed
        self._writing = p.writing
        self._writer: BulkWriter | None = None
        self._broken = False  # a note broke the open writer: this commit's notes go note by note
        self._flushed = False  # the open writer's segment is written: the next note opens another commit
        self._docs: list[Document] = []
        self._records: list[FileRecord] = []  # the manifest's record of each of `_docs`, made as it came
        self._worker: list[Worker] = []
        self.chunks = 0  # in the open writer: what its finish will write (`ParallelBuild` weighs the end by it)

    def add(self, doc: Document, old: FileRecord | None) -> None:
        """A note read here, into the open writer at once (`old`: what the manifest held of it)."""
        res = self._res
        res.warnings.extend(doc.warnings)
        if old is None:
            res.added += 1
        else:
            res.changed += 1
        if self._flushed:  # a claim given back after this process's segment was written
            self.commit()
        self._docs.append(doc)
        self.chunks += len(doc.chunks)
        record = record_for(doc)  # here, not at the commit: the worker waits for no tail
        record.encoded()  # nor for the manifest's row of it (the manifest is written after the commit)
        self._records.append(record)
        if not self._broken:
            try:
                self._open().add(doc)
            except Exception:  # noqa: BLE001 - the commit takes this commit's notes one by one
                self._broken = True
                if self._writer is not None:
                    self._writer.cancel()
        # Attachments commit sooner: one PDF can hold thousands of chunks.
        if len(self._docs) >= BATCH or (attachment_kind(doc.rel_path) and sum(len(d.chunks) for d in self._docs) >= 5 * BATCH):
            self.commit()

    def built(self, unit: BuiltJob) -> None:
        """A segment of the worker's: its notes wait with it for the commit (and are counted once a
        commit holds them: a refused segment's notes are read again, and counted, here)."""
        notes: list[tuple[ScanEntry, IndexedNote]] = []
        for (entry, _), got in zip(unit.job, unit.outcomes, strict=True):
            if isinstance(got, IndexedNote):
                notes.append((entry, got))
            else:
                self._intake.not_indexed(entry, got, self._res, self._removed, self._writing)
        if notes:
            self._worker.append((unit.built, notes))

    def flush_now(self) -> None:
        """This process has no claim left: its segment is written while the worker finishes its last."""
        if self._writer is not None and not self._broken and not self._flushed:
            self._flushed = self._writer.flush_now()

    def _open(self) -> BulkWriter:
        if self._writer is None:
            self._writing()
            self._writer = self._intake.keyword.bulk()
        return self._writer

    def commit(self) -> None:
        """One commit of all it holds; the manifest and links take the notes once it is done."""
        own, records, worker, broken = self._docs, self._records, self._worker, self._broken
        self._docs, self._records, self._worker, self._broken, self._flushed = [], [], [], False, False
        self.chunks = 0
        writer, self._writer = self._writer, None
        if not own and not worker:
            if writer is not None:
                writer.cancel()
            return
        files = self._intake.files
        worker_notes = [note for _, notes in worker for _, note in notes]
        stale = [d.rel_path for d in own if d.rel_path in files] + [n.rel_path for n in worker_notes if n.rel_path in files]
        self._writing()
        if not broken:
            try:
                (writer or self._intake.keyword.bulk()).commit(stale, [b for b, _ in worker if b is not None])
            except Exception:  # noqa: BLE001 - the in-process way has the per-note boundary
                broken = True
            else:
                self._counted(worker_notes)
                self._taken([*zip(own, records, strict=True), *((n, n.record) for n in worker_notes)])
                return
        if writer is not None:
            writer.cancel()
        self._res.reindexed.extend(self._intake.commit_each(own, [], self._res))
        for built, notes in worker:
            self._built_alone(built, notes)

    def _built_alone(self, built: BuiltSegment | None, notes: list[tuple[ScanEntry, IndexedNote]]) -> None:
        """A worker's segment in a commit of its own; if the index refuses it, its notes are read again
        here (the worker sent no parsed notes) and go the in-process way, note by note where need be."""
        replaced = [n.rel_path for _, n in notes if n.rel_path in self._intake.files]
        try:
            if built is not None:
                self._intake.keyword.add_built(built, replaced)
            elif replaced:  # notes that now hold no chunks
                self._intake.keyword.apply(replaced, [])
        except Exception:  # noqa: BLE001 - the per-note boundary
            self._read_again([entry for entry, _ in notes])
            return
        self._counted([n for _, n in notes])
        self._taken([(n, n.record) for _, n in notes])

    def _read_again(self, entries: list[ScanEntry]) -> None:
        """A refused segment's notes, read and parsed here (`NoteIntake.one`: counted, skipped with a
        reason where need be) and committed note by note where the index refuses the batch."""
        p, batch = self._p, list[Document]()
        for entry in entries:
            batch = self._intake.one(entry, batch, p.res, p.removed, p.reading, p.writing, p.cancel)
        if batch:
            p.writing()
            p.res.reindexed.extend(self._intake.commit_each(batch, [], p.res))

    def _counted(self, notes: Sequence[IndexedNote]) -> None:
        """The worker's notes a commit holds, in the sync report (before the manifest takes them)."""
        res, files = self._res, self._intake.files
        for note in notes:
            res.warnings.extend(note.warnings)
            if note.rel_path in files:
                res.changed += 1
            else:
                res.added += 1

    def _taken(self, notes: Sequence[tuple[Document | IndexedNote, FileRecord]]) -> None:
        """Committed: the notes into the link graph and the manifest, with their records."""
        intake = self._intake
        make_private(intake.keyword.directory, tree=True)  # Whoosh creates its files 0644
        intake.links.apply([], [n for n, _ in notes])
        for note, record in notes:
            intake.files[note.rel_path] = record
        self._res.reindexed.extend(n.rel_path for n, _ in notes)

    def cancel(self) -> None:
        """Drop the open writer (the pass failed): nothing it held is in the manifest."""
        if self._writer is not None:
            self._writer.cancel()
            self._writer = None


def take_build(intake: NoteIntake, build: ParallelBuild, todo: list[ScanEntry], p: Pass) -> None:
    """Every unit of a parallel build into the indexes, committed at the end (and every `BATCH` notes)."""
    one = OneCommit(intake, p)
    build.chunks_here = lambda: one.chunks
    total, done, res, cancel = len(todo), 0, p.res, p.cancel
    try:
        for unit in work_units(build, todo):
            if cancel is not None and cancel.is_set():
                res.cancelled = True
                break
            if isinstance(unit, int):  # the worker answered a claim
                _progress(p, done + unit, total)
            elif isinstance(unit, BuiltJob):
                one.built(unit)
            else:
                for entry in unit:
                    if cancel is not None and cancel.is_set():
                        break
                    intake.one(entry, [], res, p.removed, p.reading, p.writing, cancel, into=one)
                    done += 1
                    if done % 25 == 1:
                        _progress(p, done + build.answered_notes, total)
                if cancel is not None and cancel.is_set():  # also a PDF's extraction cut short: not a skip
                    res.cancelled = True
                    break
            if build.waiting:
                one.flush_now()
        one.commit()
    except BaseException:
        one.cancel()
        raise


def _progress(p: Pass, done: int, total: int) -> None:
    if p.progress is not None and done < total:  # the pass's end says `total`: the last note may be skipped
        p.progress(done, total, "keyword")

