"""Build Whoosh segments in a second process while this one indexes too.

Whoosh is pure Python under one GIL, and a first index is all CPU: reading and
parsing notes, analysing chunks, writing postings. An earlier design let a worker
parse and analyse while this process wrote; the worker became the bottleneck
(the writer waited ~3 s of 7 on tldr) and every posting was pickled across. Here
both processes run the whole pipeline on different notes:

- the notes are cut into jobs of `JOB_NOTES`; the worker takes jobs from the
  front, reads, parses and analyses their notes and writes one finished Whoosh
  segment into a scratch folder of its own (Whoosh deletes unknown segment files
  from the index folder at every commit, so it cannot write there);
- this process takes jobs from the back and indexes them the usual way;
- a worker's segment is moved into the index folder and listed in the next table
  of contents (`KeywordIndex.add_built`): only the parsed notes come back pickled,
  for the manifest and the link graph.

A job the worker cannot build (it died, a note broke the writer) is indexed here
instead, note by note with the usual per-file error boundary. Only bulk work on a
machine with a spare core uses it: starting the worker costs ~0.5 s.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh.codec.whoosh3 import W3Codec
from whoosh.filedb.filestore import FileStorage

from core.base.gc_pause import gc_paused
from core.base.models import Document, SkippedFile
from core.index.fast_writer import FastSegmentWriter
from core.index.file_errors import check_storable, parse_error
from core.index.keyword_schema import INDEX_NAME, build_schema, document_fields
from core.vault.chunker import ChunkLimits, new_parser
from core.vault.links import new_link_parser
from core.vault.notes import document_version, parse_note
from core.vault.obsidian_settings import settings_for_note
from core.vault.scanner import ScanEntry, read_note_bytes

MIN_NOTES = 400  # fewer notes than this are indexed in-process: starting a worker costs more
# Notes per job: one Whoosh segment each, whichever process builds it. A job is ~1/6 of the notes:
# small enough that neither process waits long for the other at the end (tldr 2.9-3.0 s wall with
# 6 or 12 jobs), few enough segments that searches do not slow down (4,000 notes in 12 segments:
# keyword p50 13.6 ms against 11.5 in 4; in 6: 12.0) and Whoosh's merge policy leaves them alone.
JOBS = 6
MIN_JOB_NOTES = 50
MAX_JOB_NOTES = 1000
JOB_TIMEOUT_S = 900.0  # a worker killed from outside never answers: its job is then indexed here
AHEAD = 2  # jobs handed to the worker at a time; the rest wait for whichever process is free first

Outcome = Document | SkippedFile | None  # None: the note holds what the index holds already
Job = list[tuple[ScanEntry, str | None]]  # notes with the version the index holds (None: new)


@dataclass(frozen=True, slots=True)
class BuiltSegment:
    """A finished Whoosh segment in a scratch folder, waiting to be listed in the index."""

    segment: Any  # whoosh.codec.whoosh3.W3Segment
    folder: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BuiltJob:
    """A job the worker finished: each note's outcome, in order, and the segment of its chunks."""

    job: Job
    outcomes: list[Outcome]
    built: BuiltSegment | None  # None: no note of the job had chunks to add


class _Worker:
    """Per-process state: the parsers are made once."""

    parsers: tuple[Any, Any] | None = None


def spare_core() -> bool:
    """Whether a second process would get a core of its own.

    On a busy machine the worker only adds its start-up and the wait for its last job: tldr
    at load ~3.9 on 2 cores took 8.3-10.1 s wall with it against 6.7-6.9 s without. How busy
    is read over the last 50 ms where the system says (Linux's /proc/stat): the load average
    lags a minute behind, so the burst of a previous index (or of anything else the user just
    ran) would keep the worker off on an idle machine. Elsewhere the 1-minute load average
    decides; where no load is known (Windows), the worker is used.
    """
    cores = os.cpu_count() or 1
    if cores < 2:
        return False
    busy = busy_cores()
    if busy is None:
        getloadavg = getattr(os, "getloadavg", None)
        busy = getloadavg()[0] if getloadavg is not None else None
    return busy is None or busy < cores - 1


def busy_cores(window_s: float = 0.05, stat: Path = Path("/proc/stat")) -> float | None:
    """Cores busy (not idle, not waiting for a disk) over `window_s`; None where unknown."""

    def sample() -> tuple[int, int] | None:
        try:
            with stat.open("rb") as f:
                fields = [int(x) for x in f.readline().split()[1:9]]  # user .. steal (guest is within user)
        except (OSError, ValueError):
            return None
        if len(fields) < 5:
            return None
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait

    first = sample()
    if first is None:
        return None
    time.sleep(window_s)
    second = sample()
    if second is None or second[0] <= first[0]:
        return None
    total, idle = second[0] - first[0], second[1] - first[1]
    return (total - idle) / total * (os.cpu_count() or 1)


def read_note(vault: str, entry: ScanEntry, known_version: str | None, limits: ChunkLimits, max_bytes: int) -> Outcome:
    """Read and parse one note inside the per-file error boundary (as `VaultIndex._read`)."""
    if _Worker.parsers is None:
        _Worker.parsers = (new_parser(), new_link_parser())
    parser, link_parser = _Worker.parsers
    try:
        raw = read_note_bytes(entry, max_bytes)
        if isinstance(raw, SkippedFile):
            return raw
        if known_version is not None and known_version == document_version(raw):
            return None
        settings = settings_for_note(entry.path, entry.rel_path)
        doc = parse_note(
            vault, entry.rel_path, raw, size=entry.size, mtime_ns=entry.mtime_ns, limits=limits, parser=parser, link_parser=link_parser, settings=settings
        )
        check_storable(doc)
    except Exception as exc:  # noqa: BLE001 - the per-file boundary
        return parse_error(entry.rel_path, exc)
    return doc


def build_job(vault: str, job: Job, limits: ChunkLimits, max_bytes: int, scratch: str) -> tuple[list[Outcome], BuiltSegment | None]:
    """The worker's side: parse the job's notes and write their chunks as one Whoosh segment."""
    with gc_paused():  # millions of short-lived objects, no cycles worth collecting mid-job
        outcomes = [read_note(vault, entry, known, limits, max_bytes) for entry, known in job]
        docs = [o for o in outcomes if isinstance(o, Document) and o.chunks]
        if not docs:
            return outcomes, None
        folder = tempfile.mkdtemp(prefix="segment-", dir=scratch)
        storage = FileStorage(folder)
        ix = storage.create_index(build_schema(), indexname=INDEX_NAME)
        writer = FastSegmentWriter(ix, codec=W3Codec(compression=0), limitmb=64, _lk=False)
        try:
            for doc in docs:
                for fields in document_fields(doc):
                    writer.add_document(**fields, _lang=fields["lang"])
            segment = writer._finalize_segment()
        except BaseException:
            writer.cancel()
            raise
        writer._finish()
        prefix = segment.segment_id()  # "chunks_<random id>": every file of the segment starts so
        files = tuple(sorted(name for name in os.listdir(folder) if name.startswith(prefix)))
        return outcomes, BuiltSegment(segment, folder, files)


class ParallelBuild:
    """Hands out the jobs of a bulk index: built segments from the worker, or jobs to index here.

    Iterating yields, until every job is accounted for, either a `BuiltJob` (the worker's) or
    a `Job` for the caller to index itself: a job the worker has not been given yet (taken from
    the back, so the two processes meet in the middle) or one the worker failed on.
    """

    def __init__(self, pool: Any, vault: str, jobs: Sequence[Job], limits: ChunkLimits, max_bytes: int, scratch: Path) -> None:
        self._pool = pool
        self._args = (vault, limits, max_bytes, str(scratch))
        self._scratch = scratch
        self._jobs: deque[Job] = deque(jobs)
        self._pending: deque[tuple[Job, Any]] = deque()
        self._fill()

    @classmethod
    def start(cls, vault: str, notes: Sequence[tuple[ScanEntry, str | None]], limits: ChunkLimits, max_bytes: int, scratch: Path) -> ParallelBuild | None:
        """A running build, or None where a worker is not worth it or cannot start."""
        if len(notes) < MIN_NOTES or not spare_core() or multiprocessing.current_process().daemon:
            return None
        shutil.rmtree(scratch, ignore_errors=True)  # a crashed build's leftovers
        try:
            scratch.mkdir(parents=True, exist_ok=True)
            pool = multiprocessing.get_context("spawn").Pool(1)
        except Exception:  # noqa: BLE001 - no worker: the caller indexes in-process
            return None
        size = max(MIN_JOB_NOTES, min(MAX_JOB_NOTES, -(-len(notes) // JOBS)))
        jobs = [list(notes[i : i + size]) for i in range(0, len(notes), size)]
        return cls(pool, vault, jobs, limits, max_bytes, scratch)

    def _fill(self) -> None:
        vault, limits, max_bytes, scratch = self._args
        while len(self._pending) < AHEAD and self._jobs:
            job = self._jobs.popleft()
            self._pending.append((job, self._pool.apply_async(build_job, (vault, job, limits, max_bytes, scratch))))

    def _collect(self, timeout: float) -> BuiltJob | Job:
        job, result = self._pending.popleft()
        try:
            outcomes, built = result.get(timeout=timeout)
        except Exception:  # noqa: BLE001 - a worker that died, hung or failed: this job in-process
            return job
        finally:
            self._fill()
        return BuiltJob(job, outcomes, built)

    def __iter__(self) -> Iterator[BuiltJob | Job]:
        while self._pending or self._jobs:
            if self._pending and self._pending[0][1].ready():
                yield self._collect(0)
            elif self._jobs:
                yield self._jobs.pop()
            else:
                yield self._collect(JOB_TIMEOUT_S)

    def close(self) -> None:
        """Stop the worker (also mid-way: a cancelled sync leaves nothing running) and clear its scratch."""
        self._pool.terminate()
        self._pool.join()
        shutil.rmtree(self._scratch, ignore_errors=True)
