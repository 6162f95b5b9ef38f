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
- this process takes jobs from the back and indexes them the usual way; the worker
  holds one job at a time and gets the next the moment it answers (by the thread that
  reads its answers), so at the end neither process waits for a job the other has
  not started;
- a worker's segment is moved into the index folder and listed in the next table
  of contents (`KeywordIndex.add_built`): only the parsed notes and their chunks'
  hashes come back pickled, for the manifest and the link graph.

A job the worker cannot build (it died, a note broke the writer) is indexed here
instead, note by note with the usual per-file error boundary. Only bulk work on a
machine with a spare core uses it: a worker is ready ~0.3 s after its start, so
`cairn index` starts it before its own imports (`core.cli.early_worker`).
"""

from __future__ import annotations

import queue
import shutil
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, cast

from core.base.gc_pause import gc_paused
from core.base.spare_core import (
    FORK_MIN_WORK_S,
    PARALLEL_MIN_WORK_S,
    ForkLater,
    Started,
    daemon_child,
    fork_safe,
    spare_core,
    start_child,
    take,
    work_s,
)
from core.index.segment_worker import BuiltSegment, Job, Outcome
from core.vault.chunker import ChunkLimits
from core.vault.kinds import attachment_kind
from core.vault.scanner import ScanEntry

MIN_WORK_S = PARALLEL_MIN_WORK_S  # less work than this is indexed in-process: starting a worker costs more
WORKER_TARGET = "core.index.segment_worker:serve"  # what the worker process runs (`core.base.spare_core.spawn`)
WORKER_NAME = "cairn-segment-worker"
# Jobs: one Whoosh segment each, whichever process builds it. A job is ~1/6 of the work (`cut_jobs`):
# small enough that neither process waits long for the other at the end (tldr 2.9-3.0 s wall with
# 6 or 12 jobs), few enough segments that searches do not slow down (4,000 notes in 12 segments:
# keyword p50 13.6 ms against 11.5 in 4; in 6: 12.0) and Whoosh's merge policy leaves them alone.
WEIGHTS = (3, 2, 1, 1, 2, 3)
# A forked worker (`core.base.spare_core.fork`: the CLI on Linux) starts with the build, so both processes
# start their jobs together and fewer, larger jobs meet as evenly in the middle; each job costs a segment,
# its hand-over and a commit (~0.02 CPU-s). Medians of 13-15 interleaved cold indexes at load 5-8, 6
# jobs against 4: rust-book 1.049 vs 0.982 s, obsidian-tasks-docs 0.914 vs 0.865 s (docs/benchmarks.md).
# Session 8, rust-book, 2:1:1:2 against smaller middle jobs (load 1.9-2.5): 3:1:1:1:1:3 0.836 vs 0.844 s
# (15 runs), 0.954 vs 0.926 (25; CPU 1.495 vs 1.427); 4:2:1:1:2:4 0.888 vs 0.844; the last job cut
# where both processes would end together (by their measured paces) 0.812 vs 0.800 (load 5.3), 0.758 vs
# 0.745 (40 runs, load 3.3-4.6): not kept.
FORK_WEIGHTS = (2, 1, 1, 2)
# A job's least notes: 20 kept rust-book (112 chapters) to 5 jobs of unequal work, and whichever process
# finished first waited ~0.15 s for the other's last job; at 8 its jobs are the 6 of `cut_jobs`'s V.
MIN_JOB_NOTES = 8
MAX_JOB_NOTES = 1000
JOB_TIMEOUT_S = 900.0  # a worker this slow over one job is stopped and its jobs are indexed here
WAIT_SLICE_S = 0.1  # how often `cancel` is looked at while waiting for the worker
GONE_DRAIN_S = 0.5  # how long answers of a worker that just ended may take to be read
AHEAD = 1  # jobs handed to the worker at a time (the next one as soon as it answers); the rest wait for whichever process is free first


@dataclass(frozen=True, slots=True)
class BuiltJob:
    """A job the worker finished: each note's outcome, in order, and the segment of its chunks."""

    job: Job
    outcomes: list[Outcome]
    built: BuiltSegment | None  # None: no note of the job had chunks to add
    hashes: list[tuple[str, ...] | None]  # each Document outcome's chunk hashes (`records.chunk_hashes`)


class WorkerProcess:
    """The worker: a spawned process with its own pipe, given job numbers and answering each.

    A plain process rather than a pool: `multiprocessing.Pool` never fails a task whose worker
    was killed (out of memory, a segfault, a user's kill), so the indexer waited for it for
    15 minutes; here the process's sentinel says at once that it is gone. The process may have
    been started before its jobs were known (`core.base.spare_core.prestart`): the jobs travel
    once, as its first message, then only job numbers. Everything this side sends goes through
    a thread of its own, so no send waits here for a worker still starting (or busy sending a
    large answer back); answers are read by another thread as they come.
    """

    def __init__(self, started: Started, setup: tuple[Any, ...]) -> None:
        self._process = started.process
        self._conn = started.conn
        self._started = started
        self.on_answer: Any = None  # called by the reader thread with each answer's job number
        self._outbox: queue.Queue[Any] = queue.Queue()
        self._outbox.put(setup)
        # A built job's answer (its parsed notes) is megabytes, and a worker whose answer waits in
        # the pipe until this process finishes its own job sits idle all that while.
        self._answers: queue.Queue[tuple[int, Any] | None] = queue.Queue()
        self._head: list[tuple[int, Any] | None] = []
        threading.Thread(target=self._send, daemon=True, name="cairn-segment-jobs").start()
        threading.Thread(target=self._read, daemon=True, name="cairn-segment-answers").start()

    def _send(self) -> None:
        while (message := self._outbox.get()) is not None:
            try:
                self._conn.send(message)
            except (OSError, ValueError):
                return  # the worker is gone (or stopped): found by the next wait

    def _read(self) -> None:
        while True:
            try:
                got = cast("tuple[int, Any]", self._conn.recv())
            except (EOFError, OSError):
                self._answers.put(None)  # the worker is gone (or stopped)
                return
            if self.on_answer is not None:
                self.on_answer(got[0])  # the next job goes out before this one is taken in
            self._answers.put(got)

    def submit(self, index: int) -> None:
        """Ask for job `index` (answers come back in the order asked)."""
        self._outbox.put(index)

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

    def kill(self) -> None:
        """End the worker now, also mid-job, without waiting for it to be gone (`stop` waits)."""
        self._outbox.put(None)
        self._process.kill()

    def stop(self) -> None:
        """End the worker now, also mid-job, and wait for it to be gone."""
        self._outbox.put(None)
        self._started.stop()


def cut_jobs(notes: Sequence[tuple[ScanEntry, str | None]], weights: Sequence[float] = WEIGHTS) -> list[Job]:
    """The notes, in order, in about `count` runs of work (`work_s`: a note's bytes weigh most), each of
    `MIN_JOB_NOTES` to `MAX_JOB_NOTES` notes; largest at the ends, smallest in the middle.

    The worker takes jobs from the front and this process from the back, so the middle ones are
    the last to be taken: small there, whichever process finishes first waits least for the
    other (6 jobs: 25 %, 17 %, 8 %, 8 %, 17 %, 25 % of the work). Equal note counts were unequal
    work: rust-book's chapters run from 1 to 90 KB. Where the biggest job would pass
    `MAX_JOB_NOTES` (more than ~1,500 notes) they are equal runs of notes instead.
    """
    count = len(weights)
    if len(notes) * 4 > MAX_JOB_NOTES * count:
        size = max(MIN_JOB_NOTES, min(MAX_JOB_NOTES, -(-len(notes) // count)))
        return [list(notes[i : i + size]) for i in range(0, len(notes), size)]
    total = work_s(len(notes), sum(entry.size for entry, _ in notes))
    bounds = list(accumulate(w / sum(weights) * total for w in weights))
    jobs: list[Job] = []
    job: Job = []
    done = 0.0
    bound = 0
    for note in notes:
        job.append(note)
        done += work_s(1, note[0].size)
        if len(job) >= MAX_JOB_NOTES or (done >= bounds[bound] and len(job) >= MIN_JOB_NOTES):
            jobs.append(job)
            job = []
            while bound < len(bounds) - 1 and bounds[bound] <= done:
                bound += 1
    if job:
        jobs.append(job)
    return jobs


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
        # Both threads hand out jobs: this one takes from the back, the worker's reader gives the
        # worker its next one from the front the moment it answers (so neither waits on the other).
        self._lock = threading.Lock()
        self._jobs: deque[int] = deque(range(len(jobs)))
        self._pending: deque[int] = deque()  # given to the worker, answer not taken in yet
        self._answered: set[int] = set()  # of those, answered already (the answer waits to be taken in)
        self._broken = False
        if hasattr(worker, "on_answer"):
            worker.on_answer = self._on_answer
        with self._lock:
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
        """A running build, or None where a worker is not worth it or cannot start.

        The worker the CLI started early (`core.base.spare_core.prestart`) is used when there is
        one; its verdict on the machine's load stands (None: no spare core then). Where the CLI
        asked for a fork instead (`ForkLater`: Linux), the worker is forked now, ready at once,
        unless a thread has started meanwhile (then it is spawned).
        """
        early = take(WORKER_TARGET)
        forked = isinstance(early, ForkLater) and fork_safe()  # else a worker is spawned, and worth it on more work
        if (
            work_s(len(notes), sum(entry.size for entry, _ in notes)) < (FORK_MIN_WORK_S if forked else MIN_WORK_S)
            or daemon_child()
        ):
            if isinstance(early, Started):
                early.stop()
            return None
        if early is None or (early is False and not spare_core()):
            return None
        shutil.rmtree(scratch, ignore_errors=True)  # a crashed build's leftovers
        jobs = cut_jobs(notes, FORK_WEIGHTS if forked else WEIGHTS)
        try:
            scratch.mkdir(parents=True, exist_ok=True)
            started = early if isinstance(early, Started) else start_child(WORKER_TARGET, WORKER_NAME, forked=forked)
        except Exception:  # noqa: BLE001 - no worker: the caller indexes in-process
            if isinstance(early, Started):
                early.stop()
            return None
        return cls(WorkerProcess(started, (vault, jobs, limits, max_bytes, str(scratch))), jobs, scratch, cancel)

    def _fill(self) -> None:
        """Give the worker jobs from the front while it holds fewer than `AHEAD` (under the lock)."""
        while not self._broken and len(self._pending) - len(self._answered) < AHEAD and self._jobs:
            index = self._jobs.popleft()
            self._pending.append(index)
            try:
                self._worker.submit(index)
            except (OSError, ValueError):  # the worker is gone: found by the next wait
                break

    def _on_answer(self, index: int) -> None:
        with self._lock:
            if index in self._pending:
                self._answered.add(index)
                self._fill()

    def _cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.is_set()

    def _collect(self) -> BuiltJob | Job | None:
        """The worker's next answer: its built job, the job back if it failed on it, None if it is gone."""
        got = self._worker.answer()
        if got is None:
            return None
        index, built = got
        with self._lock:
            self._pending.remove(index)
            self._answered.discard(index)
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
        with self._lock:
            self._broken = True
        self._worker.stop()

    def _take_back(self) -> int | None:
        """A job nobody holds, from the back, for this process; None when none is left."""
        with self._lock:
            return self._jobs.pop() if self._jobs else None

    def __iter__(self) -> Iterator[BuiltJob | Job]:
        """The units of work in turn, each taken in (until the next one is asked for) with the cyclic
        collector paused, as the worker builds its jobs (`segment_worker.build_job`): a job's notes make
        many objects and no cycles worth a pass, and a full pass over a loaded index path costs ~25 ms.
        Between units it runs again, so what a unit leaves is collected before the next."""
        for unit in self._units():
            with gc_paused():
                yield unit

    def _units(self) -> Iterator[BuiltJob | Job]:
        while (self._pending or self._jobs) and not self._cancelled():
            if self._pending and self._worker.wait(0):
                yield from self._wait()
            elif (index := self._take_back()) is not None:
                yield self._all[index]
            else:
                yield from self._wait()

    def close(self) -> None:
        """Stop the worker (also mid-way: a cancelled sync leaves nothing running) and clear its scratch.

        The worker is killed first and waited for last: the system tears its memory down (~3-12 ms)
        while this process clears the scratch folder (a `rmdir` is 1.5-4 ms on the VM's ext4).
        """
        self._worker.kill()
        shutil.rmtree(self._scratch, ignore_errors=True)
        self._worker.stop()


def work_units(build: ParallelBuild | None, todo: list[ScanEntry]) -> Iterator[BuiltJob | list[ScanEntry]]:
    """A pass's work in pieces: every entry in order (no build), or the build's jobs (the worker's built,
    or notes to index here) then the attachments, which no job holds."""
    if build is None:
        yield todo
        return
    for unit in build:
        yield unit if isinstance(unit, BuiltJob) else [entry for entry, _ in unit]
    yield [e for e in todo if attachment_kind(e.rel_path) is not None]
