"""The parallel build's worker process: it reads, parses and analyses the notes of the claims it is
given into one open Whoosh segment in a scratch folder of its own, and finishes the segment when
asked (or when it holds enough).

Split from `core.index.parallel_build`, which hands out the claims and takes the segments in.
The process is started by `core.base.spare_core` (forked by the CLI on Linux, spawned elsewhere)
and runs `serve`: it readies itself first (imports, parsers), then takes its claims as its first
message. A claim is answered with what the indexing process needs of its notes (`IndexedNote`: a
manifest record, link-graph data, warnings; or a skip) as soon as its chunks are in the open
segment; the segment itself is answered later, when the indexing process says no claim is left
(`FINISH`) or when it passes `SEGMENT_NOTES` / `SEGMENT_BYTES`, so a claim costs no segment, no
hand-over and no commit of its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from core.base.gc_pause import gc_paused
from core.base.models import Document, FileWarning, Link, SkippedFile
from core.base.structured import Task
from core.index.file_errors import check_storable, parse_error
from core.index.keyword_store import KeywordStore
from core.index.manifest import ChunkRecord, FileRecord
from core.index.records import record_for
from core.vault.chunker import ChunkLimits
from core.vault.lazy_parser import lazy_parsers
from core.vault.notes import document_version, parse_note
from core.vault.obsidian_settings import SETTINGS_RECHECK_S, VaultSettings, settings_for_note
from core.vault.scanner import ScanEntry, read_note_bytes

Outcome = Document | SkippedFile | None  # None: the note holds what the index holds already
Job = list[tuple[ScanEntry, str | None]]  # notes with the version the index holds (None: new)
FINISH = -1  # asked instead of a claim: finish the open segment and answer it
# An open segment is finished once it holds this much (memory stays bounded on 10k-40k-note vaults):
# what the largest job of the earlier one-segment-a-job build held (1,000 notes; ~1/6 of a big vault).
SEGMENT_NOTES = 1000
SEGMENT_BYTES = 24 << 20

# The worker's answers, as (kind, ...) tuples:
DONE = "done"  # (DONE, claim, answers): each note's `Answer`; the claim's chunks are in the open segment
FAILED = "failed"  # (FAILED, claim): a note broke the writer; every claim since the last segment is lost too
SEGMENT = "segment"  # (SEGMENT, built or None, claims): a finished segment holding these claims' chunks
FINISHED = "finished"  # the same, answering FINISH: the worker holds nothing more


@dataclass(frozen=True, slots=True)
class IndexedNote:
    """What the indexing process needs of a note the worker parsed and added to its segment, instead
    of the whole parsed note: its manifest record, what the link graph keeps of it (`LinkGraph.apply`
    reads the path, version, aliases and links), and its warnings for the sync report.

    A whole `Document` (every chunk's text, properties, tasks) cost that process ~0.1-0.2 ms a note
    to unpickle and make a record of, under the GIL its own indexing needs. Where the index refuses
    the worker's segment, its notes are read again there (`core.index.build_intake`).
    """

    rel_path: str
    record: FileRecord
    aliases: tuple[str, ...]
    links: tuple[Link, ...]
    warnings: tuple[FileWarning, ...]

    @property
    def document_version(self) -> str:
        return self.record.version

    @classmethod
    def of(cls, doc: Document) -> IndexedNote:
        record = record_for(doc)
        record.encoded()  # the manifest's row, made here beside the other process's work (it travels with the record)
        return cls(doc.rel_path, record, doc.aliases, doc.links, doc.warnings)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to the indexing process) as tuples of field values, rebuilt by the classes' own
        constructors: a slotted dataclass pickles through `__getstate__`/`__setstate__`, two Python
        calls a task, chunk record and link (a Tasks vault's note holds dozens of tasks)."""
        r = self.record
        chunks, tasks, links = list(map(_CHUNK_VALUES, r.chunks)), list(map(_TASK_VALUES, r.tasks)), list(map(_LINK_VALUES, self.links))
        row = r.encoded()  # the manifest's row, made in this process, travels too
        return _indexed_note, (self.rel_path, _RECORD_HEAD(r), chunks, tasks, self.aliases, links, self.warnings, row)


def _values(cls: type) -> attrgetter[Any]:
    """A dataclass's field values, in its constructor's order: one C call."""
    return attrgetter(*(f.name for f in fields(cls)))


_CHUNK_VALUES, _TASK_VALUES, _LINK_VALUES = _values(ChunkRecord), _values(Task), _values(Link)
_RECORD_NAMES = tuple(f.name for f in fields(FileRecord) if f.init and f.name not in ("chunks", "tasks"))  # a note's own values
_RECORD_HEAD = attrgetter(*_RECORD_NAMES)


def _indexed_note(
    rel_path: str,
    head: tuple[Any, ...],
    chunks: list[tuple[Any, ...]],
    tasks: list[tuple[Any, ...]],
    aliases: tuple[str, ...],
    links: list[tuple[Any, ...]],
    warnings: tuple[FileWarning, ...],
    row: bytes | None = None,
) -> IndexedNote:
    """`IndexedNote.__reduce__`'s values made an `IndexedNote` again."""
    own = dict(zip(_RECORD_NAMES, head, strict=True))
    record = FileRecord(**own, chunks=tuple(ChunkRecord(*c) for c in chunks), tasks=tuple(Task(*t) for t in tasks))
    if row is not None:
        record.keep_encoded(row)
    return IndexedNote(rel_path, record, aliases, tuple(Link(*link) for link in links), warnings)


Answer = IndexedNote | SkippedFile | None  # a note of a claim, as the worker answers it (`Outcome`, slimmed)


@dataclass(frozen=True, slots=True)
class BuiltSegment:
    """A finished Whoosh segment in a scratch folder, waiting to be listed in the index."""

    segment: Any  # whoosh.codec.whoosh3.W3Segment
    folder: str
    files: tuple[str, ...]


class _Worker:
    """Per-process state: the parsers are made once; the vault's Obsidian settings re-read every few seconds."""

    parsers: tuple[Any, Any] | None = None
    settings: tuple[float, VaultSettings] | None = None
    spent: Any = None  # the last segment's postings, left for the process's end (`OpenSegment.finish`)
    stores: dict[str, KeywordStore] = {}  # per process, by scratch folder

    @classmethod
    def store_in(cls, scratch: str) -> KeywordStore:
        """The process's scratch index, made in the scratch folder by its first segment: every segment
        is written beside the others (each names its files by its own id), where a folder a segment cost
        a directory made, and removed at the build's end (a `rmdir` takes 1.5-4 ms on the VM's ext4)."""
        store = cls.stores.get(scratch)
        if store is None:
            store = cls.stores[scratch] = KeywordStore.scratch(scratch)
        return store

    @classmethod
    def settings_for(cls, entry: ScanEntry) -> VaultSettings:
        now = time.monotonic()
        if cls.settings is None or now - cls.settings[0] > SETTINGS_RECHECK_S:
            cls.settings = (now, settings_for_note(entry.path, entry.rel_path))
        return cls.settings[1]


def read_note(vault: str, entry: ScanEntry, known_version: str | None, limits: ChunkLimits, max_bytes: int) -> Outcome:
    """Read and parse one note inside the per-file error boundary (as `VaultIndex._read`)."""
    if _Worker.parsers is None:
        _Worker.parsers = lazy_parsers()
    parser, link_parser = _Worker.parsers
    try:
        raw = read_note_bytes(entry, max_bytes)
        if isinstance(raw, SkippedFile):
            return raw
        if known_version is not None and known_version == document_version(raw):
            return None
        settings = _Worker.settings_for(entry)  # one vault per worker process
        doc = parse_note(
            vault, entry.rel_path, raw, size=entry.size, mtime_ns=entry.mtime_ns, limits=limits, parser=parser, link_parser=link_parser, settings=settings
        )
        check_storable(doc)
    except Exception as exc:  # noqa: BLE001 - the per-file boundary
        return parse_error(entry.rel_path, exc)
    return doc


@dataclass(slots=True)
class OpenSegment:
    """The worker's one open writer on its scratch index, and the claims whose chunks it holds."""

    scratch: str
    bound: tuple[int, int] = (SEGMENT_NOTES, SEGMENT_BYTES)  # notes, bytes: the segment is finished past either
    writer: Any = None  # FastSegmentWriter, made by the first note with chunks
    claims: list[int] = field(default_factory=list)
    notes: int = 0
    size: int = 0

    def add(self, claim: int, job: Job, vault: str, limits: ChunkLimits, max_bytes: int) -> list[Answer]:
        """Parse the claim's notes and add their chunks; make each note's manifest record (work the
        indexing process would do otherwise). If it raises, the open segment is to be dropped (`drop`)."""
        with gc_paused():  # many short-lived objects, no cycles worth collecting mid-claim
            outcomes = [read_note(vault, entry, known, limits, max_bytes) for entry, known in job]
            answers = [IndexedNote.of(o) if isinstance(o, Document) else o for o in outcomes]
            docs = [o for o in outcomes if isinstance(o, Document) and o.chunks]
            self.claims.append(claim)
            if docs:
                if self.writer is None:
                    self.writer = _Worker.store_in(self.scratch).writer(locked=False)
                KeywordStore.add(self.writer, docs)
                self.notes += len(docs)
                self.size += sum(d.size for d in docs)
        return answers

    def full(self) -> bool:
        return self.notes >= self.bound[0] or self.size >= self.bound[1]

    def finish(self, kind: str) -> tuple[str, BuiltSegment | None, list[int]]:
        """The open segment finished, for the claims it holds; the next claim opens a new one."""
        built = None
        if self.writer is not None:
            if kind == FINISHED:  # the last segment: its postings are freed with the process (killed next), not one by one now
                _Worker.spent = getattr(self.writer.pool, "postings", None)
            with gc_paused():
                segment, files = KeywordStore.finish_segment(self.writer, self.scratch)
            built = BuiltSegment(segment, self.scratch, files)
        answer = (kind, built, self.claims)
        self._reset()
        return answer

    def drop(self) -> None:
        """Forget the open segment (a note broke it): its claims are indexed by the other process."""
        if self.writer is not None:
            try:
                self.writer.cancel()
            except Exception:  # noqa: BLE001, S110 - a writer a note broke may be broken for good; its files are the scratch's
                pass
        self._reset()

    def _reset(self) -> None:
        self.writer, self.claims, self.notes, self.size = None, [], 0, 0


def build_job(vault: str, job: Job, limits: ChunkLimits, max_bytes: int, scratch: str) -> tuple[list[Answer], BuiltSegment | None]:
    """One job as one finished segment (a claim and its segment at once)."""
    open_segment = OpenSegment(scratch)
    answers = open_segment.add(0, job, vault, limits, max_bytes)
    return answers, open_segment.finish(SEGMENT)[1]


def warm_up() -> None:
    """What every claim needs, made while the worker waits for its claims: the parsers (markdown-it's, made
    when a note first needs one: `core.vault.lazy_parser`)."""
    if _Worker.parsers is None:
        _Worker.parsers = lazy_parsers()


def _answers(open_segment: OpenSegment, claim: int, setup: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """What a message asks for, answered: FINISH, or a claim (and the segment it filled)."""
    if claim == FINISH:
        return [open_segment.finish(FINISHED)]
    vault, jobs, limits, max_bytes = setup[:4]
    try:
        notes = open_segment.add(claim, jobs[claim], vault, limits, max_bytes)
    except Exception:  # noqa: BLE001 - a note that broke the writer: these claims are indexed there
        open_segment.drop()
        return [(FAILED, claim)]
    answers: list[tuple[Any, ...]] = [(DONE, claim, notes)]
    if open_segment.full():
        answers.append(open_segment.finish(SEGMENT))
    return answers


def serve(conn: Any) -> None:
    """The worker's loop: ready itself, take the claims (its first message: the vault, the claims, the
    chunk limits, the size limit, the scratch folder and the segment bound), answer each message in turn.

    Where `FINISH` is already waiting when a claim is done, the segment is finished before the claim's
    answer is sent: the indexing process, out of claims, waits for both, and pickling the answer (a few
    ms a claim) then happens beside its unpickling instead of before the segment's writing.
    """
    warm_up()
    try:
        setup = conn.recv()
    except (EOFError, OSError):
        return  # the indexing process is gone, or needed no worker after all
    open_segment = OpenSegment(setup[4], setup[5])
    ahead: int | None = None  # a message read early
    try:
        while True:
            claim, ahead = (conn.recv(), None) if ahead is None else (ahead, None)
            answers = _answers(open_segment, claim, setup)
            finishing = claim != FINISH and conn.poll() and (ahead := conn.recv()) == FINISH
            if finishing:
                answers += _answers(open_segment, FINISH, setup)
                ahead = None
            _send(conn, answers, [claim, FINISH] if finishing else [claim], open_segment)
    except (EOFError, OSError):
        return  # the indexing process is gone or done


def _send(conn: Any, answers: list[tuple[Any, ...]], asked: list[int], open_segment: OpenSegment) -> None:
    """Send the answers; one that would not pickle (nothing of it was sent) fails what was `asked`."""
    for answer in answers:
        try:
            conn.send(answer)
        except (EOFError, OSError):
            raise
        except Exception:  # noqa: BLE001 - the claims since the last segment are indexed there
            open_segment.drop()
            for claim in asked:
                conn.send((FAILED, claim))
            return
