"""Build Whoosh segments in a second process while this one indexes too.

Whoosh is pure Python under one GIL, and a first index is all CPU: reading and parsing notes,
analysing chunks, writing postings. An earlier design let a worker parse and analyse while this
process wrote; the worker became the bottleneck (the writer waited ~3 s of 7 on tldr) and every
posting was pickled across. Here both processes run the whole pipeline on different notes:

- the notes are cut into many small claims of about equal work (`cut_jobs`); the worker takes claims
  from the front, this process from the back, so they meet wherever their speeds put the middle (the
  speed of either varies ~1.5x between runs on a shared machine: a static cut could not make them end
  together). The worker is handed its next claim the moment it answers (by the thread that reads its
  answers), one or two at a time (`AHEAD`), so it never waits for this process. At the end either
  stops taking claims where the two processes' ends, finishing their segments included, come
  soonest (`ParallelBuild._ends`);
- a claim is not a segment: the worker adds each claim's notes to one open segment of its own in a
  scratch folder (Whoosh deletes unknown segment files from the index folder at every commit, so it
  cannot write there) and answers with what this process needs of each note
  (`segment_worker.IndexedNote`); it finishes the segment when told no claim is left, or when the
  segment holds enough (`segment_worker.SEGMENT_NOTES`);
- this process adds its own claims' notes to one open writer as it goes (`core.index.bulk_writer`)
  and commits once, listing the worker's segment in the same table of contents: only each note's
  manifest record, link-graph data and warnings come back pickled (not the parsed note).

A claim the worker cannot build (it died, hung, or a note broke its writer) comes back to be indexed
here, with every claim whose segment had not arrived, note by note with the usual per-file error
boundary. Only bulk work on a machine with a spare core uses it; `cairn index` forks the worker
after its imports on Linux and spawns it before them elsewhere (`core.cli.early_worker`).
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from core.base.digest import will_hash
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
from core.index import segment_worker
from core.index.segment_worker import DONE, FAILED, FINISH, FINISHED, SEGMENT, Answer, BuiltSegment, IndexedNote, Job
from core.index.worker_process import WorkerProcess
from core.vault.chunker import ChunkLimits
from core.vault.kinds import attachment_kind
from core.vault.scanner import ScanEntry

MIN_WORK_S = PARALLEL_MIN_WORK_S  # less work than this is indexed in-process: starting a worker costs more
WORKER_TARGET = "core.index.segment_worker:serve"  # what the worker process runs (`core.base.spare_core.spawn`)
WORKER_NAME = "cairn-segment-worker"
# Claims: a claim costs a round trip and its answer's pickling (no segment, no commit), so there are
# many. They shrink toward the middle, taken last: each is `TAPER` of the one nearer its end, so
# whichever process runs out first waits for at most one small claim of the other's.
CLAIMS = 16
TAPER = 0.8
MIN_JOB_NOTES = 2
MAX_JOB_NOTES = 250  # a big vault's claims: 10k notes make ~40 (each a round trip, ~1 ms)
JOB_TIMEOUT_S = 900.0  # a worker this slow over one answer is stopped and its claims are indexed here
WAIT_SLICE_S = 0.1  # how often `cancel` is looked at while waiting for the worker
AHEAD = 2  # claims the worker holds at a time (the next one goes out as soon as it answers)
FLUSH_CHUNK_S = 42e-6  # what writing a chunk costs at a segment's finish (35-50 us: `OpenSegment.finish`, `flush_now`)


def claim_weights(count: int = CLAIMS, taper: float = TAPER) -> list[float]:
    """Each claim's share of the work, largest at the ends: `taper` of the one nearer its end."""
    return [taper ** min(i, count - 1 - i) for i in range(count)]


@dataclass(frozen=True, slots=True)
class BuiltJob:
    """Claims the worker finished, as one: their notes in order, the worker's answer for each, and
    the segment holding their chunks."""

    job: Job
    outcomes: list[Answer]
    built: BuiltSegment | None  # None: no note of the claims had chunks to add


def cut_jobs(notes: Sequence[tuple[ScanEntry, str | None]], weights: Sequence[float] | None = None) -> list[Job]:
    """The notes, in order, in runs of work (`work_s`: a note's bytes weigh most) as `weights` share it
    (`claim_weights` by default), each of `MIN_JOB_NOTES` to `MAX_JOB_NOTES` notes.

    Equal note counts were unequal work: rust-book's chapters run from 1 to 40 KB. Where
    `MAX_JOB_NOTES` cuts sooner (a big vault) the claims are runs of that many notes.
    """
    weights = claim_weights() if weights is None else weights
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
    """Hands out the claims of a bulk index: segments the worker built, or claims to index here.

    Iterating yields, until every claim is accounted for or `cancel` is set, a `BuiltJob` (a segment
    of the worker's and the claims it holds), the notes the worker has answered so far (an int, as
    each claim is answered: progress, and a moment to look at `cancel`) or a `Job` for the caller to
    index itself:
    a claim the worker has not been given (taken from the back, so the two processes meet where
    their speeds put the middle) or one given back. A worker that dies (or takes longer than
    `JOB_TIMEOUT_S` over one answer) is stopped, and every claim it held whose segment has not
    arrived comes back to be indexed here; so do those of a segment a note broke.
    """

    def __init__(
        self, worker: Any, jobs: Sequence[Job], scratch: Path, cancel: threading.Event | None = None, work: Sequence[float] | None = None
    ) -> None:
        self._worker = worker
        self._scratch = scratch
        self._cancel = cancel
        self._all = list(jobs)
        # Both threads hand out claims: this one takes from the back, the worker's reader gives the worker its next one
        self._lock = threading.Lock()
        self._jobs: deque[int] = deque(range(len(jobs)))
        self._pending: deque[int] = deque()  # given to the worker, answer not taken in yet
        self._answered: set[int] = set()  # of those, answered already (the answer waits to be taken in)
        self._open: dict[int, list[Answer]] = {}  # answered; chunks in the worker's open segment
        self._finish_sent = False
        self._stopped = self._told = False  # this process takes no more claims (`_here_ahead`); the caller was told so
        self._finished = False  # the worker answered FINISH (or is gone): it holds nothing more
        self._broken = False
        self.answered_notes = 0  # notes of the claims the worker answered (for progress)
        self._work = list(work) if work is not None else [float(len(job)) for job in self._all]  # each claim's `work_s`, to price the end (`_ends`)
        self._began = time.monotonic()
        self._worker_work = 0.0  # the work of the claims the worker answered
        self._worker_chunks = self._worker_open = 0  # their chunks (all), and those in its open segment
        self._worker_at = self._here_at = self._began  # when the worker last answered a claim, this process last took one
        self._here_work = self._here_claim = 0.0  # the work of the claims this process finished, of the one it is on
        self.chunks_here: Callable[[], int] = lambda: 0  # chunks in this process's open writer (`build_intake`)
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
        size = sum(entry.size for entry, _ in notes)
        if work_s(len(notes), size) < (FORK_MIN_WORK_S if forked else MIN_WORK_S) or daemon_child():
            if isinstance(early, Started):
                early.stop()
            return None
        if early is None or (early is False and not spare_core()):
            return None
        shutil.rmtree(scratch, ignore_errors=True)  # a crashed build's leftovers
        jobs = cut_jobs(notes)
        will_hash(size)  # each process hashes about that: its half, and its chunks'
        # A forked worker inherits its setup (the claims ...): nothing pickled, sent or waited for before its first note.
        setup = (vault, jobs, limits, max_bytes, str(scratch), (segment_worker.SEGMENT_NOTES, segment_worker.SEGMENT_BYTES))
        try:
            scratch.mkdir(parents=True, exist_ok=True)
            started = early if isinstance(early, Started) else start_child(WORKER_TARGET, WORKER_NAME, forked=forked, first=setup)
        except Exception:  # noqa: BLE001 - no worker: the caller indexes in-process
            if isinstance(early, Started):
                early.stop()
            return None
        work = [work_s(len(job), sum(entry.size for entry, _ in job)) for job in jobs]
        return cls(WorkerProcess(started, setup), jobs, scratch, cancel, work)

    def _fill(self) -> None:
        """Give the worker claims from the front while it holds fewer than `AHEAD`, and `FINISH` once none
        is left or `_worker_ahead` (unless this process stopped taking claims: `_here_ahead`) (under the lock)."""
        if self._finish_sent or self._broken:
            return
        weigh = not self._stopped
        while self._jobs and not (weigh and self._worker_ahead()):
            if len(self._pending) - len(self._answered) >= (1 if weigh and self._worker_ahead(2.0) else AHEAD):
                return
            index = self._jobs.popleft()
            self._pending.append(index)
            self._worker.submit(index)
        self._finish_sent = True
        self._worker.submit(FINISH)

    def _worker_ahead(self, margin: float = 1.0) -> bool:
        """Whether the worker should take no more claims: this process, taking all that is left, would end
        no later than the worker (`_ends`), and all that is left costs less than the worker's finish
        exceeds this process's. Within `margin` times that, the worker is handed one claim at a time
        instead of `AHEAD` (`_fill`), so that each is weighed."""
        ends = self._ends()
        if ends is None:
            return False
        worker, here, _, rate_here, left, lumps = ends
        return here + left * rate_here <= worker * margin and left * rate_here <= lumps * margin

    def _here_ahead(self) -> bool:
        """Whether this process should take no more claims: the worker, taking all that is left, would
        end no later than this process finishing its segment now (`_ends`), and all that is left costs
        less than this process's finish exceeds the worker's."""
        ends = self._ends()
        if ends is None:
            return False
        worker, here, rate_w, _, left, lumps = ends
        return worker + left * rate_w <= here and left * rate_w <= -lumps

    def _ends(self) -> tuple[float, float, float, float, float, float] | None:
        """When each process would end from now (s) without another claim (the worker, this one), what a
        unit of work adds to each, the work left, how much longer the worker's finish is (s); None until
        each finished a claim (under the lock). An end: the claims held at the process's pace so far
        (`work_s` is off 2-3x between vaults), then the finish, `FLUSH_CHUNK_S` a chunk (the worker's
        chunks a unit of work stand for the rest's). Past paces mislead on a busy machine and a claim
        left to one process is never handed back: only as much work as the finishes differ by moves."""
        if not self._worker_work or not self._here_work:
            return None
        now = time.monotonic()
        pace_w = (self._worker_at - self._began) / self._worker_work  # s a unit of `work_s`, as each runs
        pace_here = (self._here_at - self._began) / self._here_work
        finish = self._worker_chunks / self._worker_work * FLUSH_CHUNK_S  # s to finish a unit of work's chunks
        held = sum(self._work[i] for i in self._pending if i not in self._answered)
        lump_w, lump_here = held * finish + self._worker_open * FLUSH_CHUNK_S, self.chunks_here() * FLUSH_CHUNK_S
        worker = max(0.0, held * pace_w - (now - self._worker_at)) + lump_w
        here = max(0.0, self._here_claim * pace_here - (now - self._here_at)) + lump_here
        return worker, here, pace_w + finish, pace_here + finish, sum(self._work[i] for i in self._jobs), lump_w - lump_here

    def _on_answer(self, got: tuple[Any, ...]) -> None:
        if got[0] in (SEGMENT, FINISHED):
            with self._lock:
                self._worker_open = 0
        elif got[0] in (DONE, FAILED):
            with self._lock:
                if got[1] in self._pending:
                    if got[0] == DONE:  # the worker's pace and chunks, to price the end (`_ends`)
                        chunks = sum(len(a.record.chunks) for a in got[2] if isinstance(a, IndexedNote))
                        self._worker_work, self._worker_at = self._worker_work + self._work[got[1]], time.monotonic()
                        self._worker_chunks, self._worker_open = self._worker_chunks + chunks, self._worker_open + chunks
                    self._answered.add(got[1])
                    self._fill()

    def _cancelled(self) -> bool:
        return self._cancel is not None and self._cancel.is_set()

    def _answered_claim(self, index: int) -> None:
        with self._lock:
            if index in self._pending:
                self._pending.remove(index)
                self._answered.discard(index)
            self._fill()

    def _take(self, got: tuple[Any, ...]) -> list[BuiltJob | Job | int]:
        """One answer taken in: a claim's notes kept until their segment comes (the notes the worker has
        answered so far, for progress), a segment with its claims, or claims given back (a note broke
        the worker's open segment)."""
        kind = got[0]
        if kind == DONE:
            _, index, outcomes = got
            self._answered_claim(index)
            self._open[index] = outcomes
            self.answered_notes += len(self._all[index])
            return [self.answered_notes]
        if kind == FAILED:
            index = got[1]
            self._answered_claim(index)
            self._finished = self._finished or index == FINISH
            # FINISH failed: the worker holds nothing more (a claim whose answer would not pickle, too)
            with self._lock:
                back = sorted({*self._open, *([index] if index != FINISH else self._pending)})
                if index == FINISH:
                    self._pending.clear()
                    self._answered.clear()
            self._open.clear()
            return [self._all[i] for i in back]
        _, built, claims = got
        self._finished = self._finished or kind == FINISHED
        parts = [(self._all[i], self._open.pop(i)) for i in claims]
        if not parts:
            return []
        return [BuiltJob([n for p in parts for n in p[0]], [o for p in parts for o in p[1]], built)]

    def _wait(self) -> Iterator[BuiltJob | Job | int]:
        """Wait for the worker's next answer, watching `cancel`; a dead or hung worker gives its claims back."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while not self._cancelled():
            if self._worker.wait(min(WAIT_SLICE_S, max(0.0, deadline - time.monotonic()))):
                got = self._worker.answer()
                if got is not None:
                    yield from self._take(got)
                    return
                break  # gone
            if time.monotonic() >= deadline:
                break  # hung: stopped like a dead one
        else:
            return
        yield from self._give_up()

    def _give_up(self) -> Iterator[Job]:
        with self._lock:
            self._broken = True
        self._worker.stop()
        back = sorted({*self._pending, *self._open})
        self._pending.clear()
        self._open.clear()
        self._finished = True
        for index in back:
            yield self._all[index]

    def _take_back(self) -> int | None:
        """A claim nobody holds, from the back, for this process; None when none is left."""
        with self._lock:
            self._here_work += self._here_claim
            self._here_claim, self._here_at = 0.0, time.monotonic()
            self._stopped = self._stopped or (not self._broken and not self._finish_sent and self._here_ahead())
            index = self._jobs.pop() if self._jobs and (self._broken or self._finish_sent or not self._stopped) else None
            if index is not None:
                self._here_claim = self._work[index]
            self._fill()  # the last one taken: the worker is told to finish its segment
            return index

    def __iter__(self) -> Iterator[BuiltJob | Job | int]:
        """The units of work in turn, each taken in (until the next one is asked for) with the cyclic
        collector paused, as the worker builds its claims (`segment_worker.OpenSegment.add`): a claim's notes
        make many objects and no cycles worth a pass, and a full pass over a loaded index path costs ~25 ms.
        Between units it runs again, so what a unit leaves is collected before the next."""
        for unit in self._units():
            with gc_paused():
                yield unit

    def _units(self) -> Iterator[BuiltJob | Job | int]:
        while (self._jobs or self._pending or not self._finished) and not self._cancelled():
            if not self._broken and self._worker.wait(0):
                yield from self._wait()
            elif (index := self._take_back()) is not None:
                yield self._all[index]
            elif self._stopped and not self._told:
                self._told = True
                yield self.answered_notes  # this process writes its segment now (`waiting`), not after the worker's next answer
            else:
                yield from self._wait()

    @property
    def waiting(self) -> bool:
        """Whether this process has no claim left to take: what it has added waits only for the worker."""
        return not self._jobs or (self._stopped and not self._broken)

    def kill(self) -> None:
        """Stop the worker now without waiting for it: the system tears it down while this process saves
        the manifest and link graph, and `close` (which kills it too) reaps it after them."""
        self._worker.kill()

    def close(self) -> None:
        """Stop the worker (also mid-way: a cancelled sync leaves nothing running) and clear its scratch.

        The worker is killed first and waited for last: the system tears its memory down (~3-12 ms)
        while this process clears the scratch folder (a `rmdir` is 1.5-4 ms on the VM's ext4).
        """
        self._worker.kill()
        shutil.rmtree(self._scratch, ignore_errors=True)
        self._worker.stop()


def work_units(build: ParallelBuild, todo: list[ScanEntry]) -> Iterator[BuiltJob | list[ScanEntry] | int]:
    """A pass's work in pieces: the build's units (the worker's segments, its notes answered so far, or
    notes to index here), then the attachments, which no claim holds."""
    for unit in build:
        yield unit if isinstance(unit, BuiltJob | int) else [entry for entry, _ in unit]
    yield [e for e in todo if attachment_kind(e.rel_path) is not None]
