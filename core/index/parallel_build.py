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
import queue
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from core.base.gc_pause import gc_paused
from core.base.models import Document, SkippedFile
from core.index.file_errors import check_storable, parse_error
from core.index.keyword_store import KeywordStore
from core.vault.chunker import ChunkLimits, new_parser
from core.vault.links import new_link_parser
from core.vault.notes import document_version, parse_note
from core.vault.obsidian_settings import SETTINGS_RECHECK_S, VaultSettings, settings_for_note
from core.vault.scanner import ScanEntry, read_note_bytes

MIN_NOTES = 400  # fewer notes than this are indexed in-process: starting a worker costs more
# Notes per job: one Whoosh segment each, whichever process builds it. A job is ~1/6 of the notes:
# small enough that neither process waits long for the other at the end (tldr 2.9-3.0 s wall with
# 6 or 12 jobs), few enough segments that searches do not slow down (4,000 notes in 12 segments:
# keyword p50 13.6 ms against 11.5 in 4; in 6: 12.0) and Whoosh's merge policy leaves them alone.
JOBS = 6
MIN_JOB_NOTES = 50
MAX_JOB_NOTES = 1000
JOB_TIMEOUT_S = 900.0  # a worker this slow over one job is stopped and its jobs are indexed here
WAIT_SLICE_S = 0.1  # how often `cancel` is looked at while waiting for the worker
GONE_DRAIN_S = 0.5  # how long answers of a worker that just ended may take to be read
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
    """Per-process state: the parsers are made once; the vault's Obsidian settings re-read every few seconds."""

    parsers: tuple[Any, Any] | None = None
    settings: tuple[float, VaultSettings] | None = None

    @classmethod
    def settings_for(cls, entry: ScanEntry) -> VaultSettings:
        now = time.monotonic()
        if cls.settings is None or now - cls.settings[0] > SETTINGS_RECHECK_S:
            cls.settings = (now, settings_for_note(entry.path, entry.rel_path))
        return cls.settings[1]


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
        settings = _Worker.settings_for(entry)  # one vault per worker process
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
        segment, files = KeywordStore.scratch(folder).build_segment(docs, folder)
        return outcomes, BuiltSegment(segment, folder, files)


class WorkerProcess:
    """The worker: a spawned process with its own pipe, given job numbers and answering each.

    A plain process rather than a pool: `multiprocessing.Pool` never fails a task whose worker
    was killed (out of memory, a segfault, a user's kill), so the indexer waited for it for
    15 minutes; here the process's sentinel says at once that it is gone. The jobs travel
    once, with the process's start; afterwards only job numbers go to it, so a send never
    blocks while the worker is busy sending a (large) answer back.
    """

    def __init__(self, vault: str, jobs: Sequence[Job], limits: ChunkLimits, max_bytes: int, scratch: Path) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._process = ctx.Process(target=serve, args=(child, vault, list(jobs), limits, max_bytes, str(scratch)), daemon=True, name="cairn-segment-worker")
        self._process.start()
        child.close()
        # Answers are read as they come, by a thread of their own: a built job's answer (its
        # parsed notes) is megabytes, and a worker whose answer waits in the pipe until this
        # process finishes its own job sits idle all that while.
        self._answers: queue.Queue[tuple[int, Any] | None] = queue.Queue()
        self._head: list[tuple[int, Any] | None] = []
        threading.Thread(target=self._read, daemon=True, name="cairn-segment-answers").start()

    def _read(self) -> None:
        while True:
            try:
                got = self._conn.recv()
            except (EOFError, OSError):
                self._answers.put(None)  # the worker is gone (or stopped)
                return
            self._answers.put(cast("tuple[int, Any]", got))

    def submit(self, index: int) -> None:
        """Ask for job `index` (answers come back in the order asked)."""
        self._conn.send(index)

    def wait(self, timeout: float) -> bool:
        """Whether an answer is there, or the worker is gone, within `timeout` seconds."""
        if self._head:
            return True
        try:
            self._head.append(self._answers.get(timeout=timeout) if timeout > 0 else self._answers.get_nowait())
        except queue.Empty:
            return not self._process.is_alive()
        return True

    def answer(self) -> tuple[int, Any] | None:
        """The next answer (job number, built job or None if it failed), or None: the worker is gone."""
        if self._head:
            return self._head.pop()
        try:  # a worker that just ended may still have answers on their way through the reader
            return self._answers.get(timeout=GONE_DRAIN_S)
        except queue.Empty:
            return None

    def stop(self) -> None:
        """End the worker now, also mid-job, and wait for it to be gone."""
        self._process.kill()
        self._process.join()
        self._conn.close()


def serve(conn: Any, vault: str, jobs: list[Job], limits: ChunkLimits, max_bytes: int, scratch: str) -> None:
    """The worker's loop: build each job asked for; a job it cannot build is answered with None."""
    while True:
        try:
            index = conn.recv()
        except (EOFError, OSError):
            return  # the indexing process is gone or done
        try:
            answer: tuple[int, Any] = (index, build_job(vault, jobs[index], limits, max_bytes, scratch))
        except Exception:  # noqa: BLE001 - a note that broke the writer: the job is indexed there
            answer = (index, None)
        try:
            conn.send(answer)
        except (EOFError, OSError):
            return  # the indexing process is gone
        except Exception:  # noqa: BLE001 - an answer that would not pickle (nothing was sent)
            conn.send((index, None))


class ParallelBuild:
    """Hands out the jobs of a bulk index: built segments from the worker, or jobs to index here.

    Iterating yields, until every job is accounted for or `cancel` is set, either a `BuiltJob`
    (the worker's) or a `Job` for the caller to index itself: a job the worker has not been
    given yet (taken from the back, so the two processes meet in the middle) or one the worker
    failed on. A worker that dies (or takes longer than `JOB_TIMEOUT_S` over one job) is
    stopped and every job it held comes back to be indexed here.
    """

    def __init__(self, worker: Any, jobs: Sequence[Job], scratch: Path, cancel: threading.Event | None = None) -> None:
        self._worker = worker
        self._scratch = scratch
        self._cancel = cancel
        self._all = list(jobs)
        self._jobs: deque[int] = deque(range(len(jobs)))
        self._pending: deque[int] = deque()
        self._broken = False
        self._fill()

    @classmethod
    def start(
        cls,
        vault: str,
        notes: Sequence[tuple[ScanEntry, str | None]],
        limits: ChunkLimits,
        max_bytes: int,
        scratch: Path,
        cancel: threading.Event | None = None,
    ) -> ParallelBuild | None:
        """A running build, or None where a worker is not worth it or cannot start."""
        if len(notes) < MIN_NOTES or not spare_core() or multiprocessing.current_process().daemon:
            return None
        shutil.rmtree(scratch, ignore_errors=True)  # a crashed build's leftovers
        size = max(MIN_JOB_NOTES, min(MAX_JOB_NOTES, -(-len(notes) // JOBS)))
        jobs = [list(notes[i : i + size]) for i in range(0, len(notes), size)]
        try:
            scratch.mkdir(parents=True, exist_ok=True)
            worker = WorkerProcess(vault, jobs, limits, max_bytes, scratch)
        except Exception:  # noqa: BLE001 - no worker: the caller indexes in-process
            return None
        return cls(worker, jobs, scratch, cancel)

    def _fill(self) -> None:
        while not self._broken and len(self._pending) < AHEAD and self._jobs:
            index = self._jobs.popleft()
            self._pending.append(index)
            try:
                self._worker.submit(index)
            except (OSError, ValueError):  # the worker is gone: found by the next wait
                break

    def _cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.is_set()

    def _collect(self) -> BuiltJob | Job | None:
        """The worker's next answer: its built job, the job back if it failed on it, None if it is gone."""
        got = self._worker.answer()
        if got is None:
            return None
        index, built = got
        self._pending.remove(index)
        self._fill()
        return self._all[index] if built is None else BuiltJob(self._all[index], *built)

    def _wait(self) -> Iterator[BuiltJob | Job]:
        """Wait for the worker's next answer, watching `cancel`; a dead or hung worker gives its jobs back."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while not self._cancelled():
            if self._worker.wait(min(WAIT_SLICE_S, max(0.0, deadline - time.monotonic()))):
                unit = self._collect()
                if unit is not None:
                    yield unit
                    return
                break  # gone
            if time.monotonic() >= deadline:
                break  # hung: stopped like a dead one
        else:
            return
        self._give_up()
        while self._pending:
            yield self._all[self._pending.popleft()]

    def _give_up(self) -> None:
        self._broken = True
        self._worker.stop()

    def __iter__(self) -> Iterator[BuiltJob | Job]:
        while (self._pending or self._jobs) and not self._cancelled():
            if self._pending and self._worker.wait(0):
                yield from self._wait()
            elif self._jobs:
                yield self._all[self._jobs.pop()]
            else:
                yield from self._wait()

    def close(self) -> None:
        """Stop the worker (also mid-way: a cancelled sync leaves nothing running) and clear its scratch."""
        self._worker.stop()
        shutil.rmtree(self._scratch, ignore_errors=True)
