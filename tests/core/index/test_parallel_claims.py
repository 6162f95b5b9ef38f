"""The parallel build's claims protocol: a worker answering claims into an open segment, the segments
it finishes, what comes back when a claim fails or the worker is gone, and the worker's own loop."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import core.index.parallel_build as pb
from core.index.segment_worker import DONE, FAILED, FINISHED, SEGMENT
from core.vault.chunker import ChunkLimits
from core.vault.scanner import ScanEntry
from tests.core.index.test_parallel_build import Spy, _assert_same_index, _drain, _index, _with_bad_files
from tests.fixture_notes import write_vault


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    """60 generated notes (tests/fixture_notes.py) and the bad files."""
    return _with_bad_files(write_vault(tmp_path / "vault", 60))


class Scripted:
    """A worker answering as the real one does, at once: claims done into an open segment, a segment
    every `every` claims, FINISH with the last one; claims in `fail` break the open segment; after
    `gone_after` answers it is gone."""

    def __init__(self, every: int = 0, fail: Any = (), gone_after: int | None = None) -> None:
        self.every, self.fail, self.gone_after = every, fail, gone_after
        self.asked: list[int] = []
        self.out: list[tuple[Any, ...]] = []
        self.open: list[int] = []
        self.answered = 0
        self.stopped = False

    def submit(self, index: int) -> None:
        self.asked.append(index)
        if index == pb.FINISH:
            self.out.append((FINISHED, None, self.open))
            self.open = []
        elif index in self.fail:
            self.out.append((FAILED, index))
            self.open = []
        else:
            self.out.append((DONE, index, [None]))
            self.open.append(index)
            if self.every and len(self.open) >= self.every:
                self.out.append((SEGMENT, None, self.open))
                self.open = []

    def wait(self, timeout: float) -> bool:
        return bool(self.out) or self.gone()

    def gone(self) -> bool:
        return self.gone_after is not None and self.answered >= self.gone_after

    def answer(self) -> tuple[Any, ...] | None:
        if self.gone() or not self.out:
            return None
        self.answered += 1
        return self.out.pop(0)

    def kill(self) -> None: ...

    def stop(self) -> None:
        self.stopped = True


def _claims(count: int) -> list[Any]:
    return [[(f"n{i}.md", None)] for i in range(count)]


def _notes_of(units: list[Any]) -> list[str]:
    """Every note of the units, sorted (the answered-notes counts left out)."""
    jobs = [unit.job if isinstance(unit, pb.BuiltJob) else unit for unit in units if not isinstance(unit, int)]
    return sorted(note for job in jobs for note, _ in job)


def test_a_job_the_worker_fails_is_indexed_here(tmp_path: Path) -> None:
    jobs = _claims(3)
    build = pb.ParallelBuild(Scripted(fail=range(3)), jobs, tmp_path / "scratch")
    assert list(build) == jobs  # each failed in the worker, and came back in order
    build.close()


def test_claims_wait_for_their_segment_and_come_back_once_each(tmp_path: Path) -> None:
    """A claim's notes reach the caller with the segment that holds them (several claims a segment);
    every note comes once, from the worker or to be indexed here."""
    jobs = _claims(12)
    worker = Scripted(every=3)
    build = pb.ParallelBuild(worker, jobs, tmp_path / "scratch")
    units = list(build)
    answered = [u for u in units if isinstance(u, int)]
    assert answered == list(range(1, len(answered) + 1))  # the worker's notes so far, a claim (one note) at a time
    built = [u for u in units if isinstance(u, pb.BuiltJob)]
    assert built and all(len(u.job) == len(u.outcomes) for u in built)
    assert max(len(u.job) for u in built) == 3  # three claims, one segment
    assert _notes_of(units) == sorted(n for job in jobs for n, _ in job)
    assert worker.asked[-1] == pb.FINISH and worker.asked.count(pb.FINISH) == 1
    assert build.answered_notes == sum(len(u.job) for u in built)


def test_a_broken_segment_gives_back_every_claim_it_held(tmp_path: Path) -> None:
    """Claims 0 and 1 are in the worker's open segment when claim 2 breaks it: all three are indexed here;
    a segment that arrived before stays the worker's."""
    jobs = _claims(10)
    build = pb.ParallelBuild(Scripted(every=3, fail={2}), jobs, tmp_path / "scratch")
    units = list(build)
    back = [u for u in units if not isinstance(u, pb.BuiltJob | int)]
    assert jobs[0] in back and jobs[1] in back and jobs[2] in back
    assert _notes_of(units) == sorted(n for job in jobs for n, _ in job)


def test_a_worker_gone_with_claims_in_its_open_segment_gives_them_back(tmp_path: Path) -> None:
    """Answered claims whose segment never came are not the worker's: they come back with the one it held."""
    jobs = _claims(10)
    worker = Scripted(gone_after=2)  # claims 0 and 1 answered into its open segment, then it died
    build = pb.ParallelBuild(worker, jobs, tmp_path / "scratch")
    units = _drain(build, 20.0)
    assert worker.stopped
    assert not [u for u in units if isinstance(u, pb.BuiltJob)]
    assert _notes_of(units) == sorted(n for job in jobs for n, _ in job)  # each once, all indexed here


def test_each_unit_is_taken_in_with_the_collector_paused_and_it_runs_again_between_them(tmp_path: Path) -> None:
    import gc

    jobs = _claims(4)
    assert gc.isenabled()
    build = pb.ParallelBuild(Scripted(fail=range(4)), jobs, tmp_path / "scratch")
    seen = []
    units = iter(build)
    for unit in units:
        seen.append((unit, gc.isenabled()))
        if len(seen) == 2:
            break  # a cancelled sync stops taking units: the collector is on again at once
    units.close()
    assert [enabled for _, enabled in seen] == [False, False]
    assert gc.isenabled()
    assert sorted([unit for unit, _ in seen] + list(build)) == sorted(jobs)  # the rest, taken in later, each once
    assert gc.isenabled()
    build.close()


def test_jobs_are_cut_by_work_not_by_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pb, "MIN_JOB_NOTES", 2)
    sizes = [200_000, 200_000] + [1_000] * 40 + [200_000, 200_000]  # two big chapters at each end
    notes: list[Any] = [(ScanEntry(f"n{i}.md", tmp_path / f"n{i}.md", size, 0), None) for i, size in enumerate(sizes)]
    jobs = pb.cut_jobs(notes)
    assert [n for job in jobs for n in job] == notes  # every note once, in order
    assert len(jobs[0]) == 2 and len(jobs[-1]) <= 2  # the big notes make short jobs
    assert max(len(job) for job in jobs) > 10  # the small ones long ones
    monkeypatch.setattr(pb, "MAX_JOB_NOTES", 5)
    assert max(len(job) for job in pb.cut_jobs(notes)) == 5


def test_the_worker_writes_every_segment_into_its_scratch_folder(tmp_path: Path) -> None:
    """No folder a job (each costs a directory made and removed): the segments lie side by side,
    each named by its own id, and each is taken into the index whole."""
    from core.index.keyword_index import KeywordIndex
    from core.index.segment_worker import IndexedNote, build_job

    root = write_vault(tmp_path / "vault", 12)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    built = [build_job("v", [(e, None) for e in half], ChunkLimits(), 200_000, str(scratch)) for half in (entries[:6], entries[6:])]
    assert not [p for p in scratch.iterdir() if p.is_dir()]
    segments = [segment for _, segment in built if segment is not None]
    assert len(segments) == 2 and all(s.folder == str(scratch) for s in segments)
    assert not set(segments[0].files) & set(segments[1].files)
    index = KeywordIndex(tmp_path / "ix")
    for segment in segments:
        index.add_built(segment, [])
    notes = [o for outcomes, _ in built for o in outcomes if isinstance(o, IndexedNote)]
    assert len(notes) == 12 and index.doc_count() == sum(len(n.record.chunks) for n in notes)


def test_the_worker_finishes_a_segment_past_its_bound_and_the_rest_when_asked(tmp_path: Path) -> None:
    """Claims go into one open segment until it holds `bound` notes; FINISH answers what is left. The
    segments lie side by side in the scratch folder and one commit lists them all."""
    from core.index.keyword_index import KeywordIndex
    from core.index.segment_worker import OpenSegment, _answers

    root = write_vault(tmp_path / "vault", 12)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    claims = [[(e, None) for e in entries[i : i + 2]] for i in range(0, 12, 2)]
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (5, 1 << 30))
    open_segment = OpenSegment(str(scratch), (5, 1 << 30))
    answers = [a for claim in (0, 1, 2, 3, pb.FINISH) for a in _answers(open_segment, claim, setup)]
    assert [a[0] for a in answers] == [DONE, DONE, DONE, SEGMENT, DONE, FINISHED]
    assert answers[3][2] == [0, 1, 2] and answers[5][2] == [3]  # 6 notes passed the bound of 5
    built = [answers[3][1], answers[5][1]]
    assert not set(built[0].files) & set(built[1].files)
    index = KeywordIndex(tmp_path / "ix")
    index.bulk().commit([], built)
    assert index.doc_count() == sum(len(o.record.chunks) for a in answers if a[0] == DONE for o in a[2])
    assert index.segment_count() == 2


def test_the_workers_last_segment_leaves_its_postings_for_the_process_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A segment finished past the bound frees its postings (more claims may follow); the one FINISH asks for
    is the worker's last (it is killed next): its postings are kept, not freed one by one before the answer."""
    from core.index.segment_worker import OpenSegment, _answers, _Worker

    monkeypatch.setattr(_Worker, "spent", None)
    root = write_vault(tmp_path / "vault", 6)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    claims = [[(e, None) for e in entries[i : i + 2]] for i in range(0, 6, 2)]
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (3, 1 << 30))
    open_segment = OpenSegment(str(scratch), (3, 1 << 30))
    assert [a[0] for claim in (0, 1) for a in _answers(open_segment, claim, setup)] == [DONE, DONE, SEGMENT]
    assert _Worker.spent is None
    assert [a[0] for claim in (2, pb.FINISH) for a in _answers(open_segment, claim, setup)] == [DONE, FINISHED]
    assert _Worker.spent and all(_Worker.spent.values())  # the last segment's postings, by field


def test_a_note_that_breaks_the_workers_segment_drops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer refuses a note: the claim fails, and the open segment (with the claims before it) is dropped."""
    from core.index.keyword_store import KeywordStore
    from core.index.segment_worker import OpenSegment, _answers

    root = write_vault(tmp_path / "vault", 6)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    claims = [[(e, None) for e in entries[i : i + 2]] for i in range(0, 6, 2)]
    scratch = tmp_path / "building"
    scratch.mkdir()
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (1000, 1 << 30))
    open_segment = OpenSegment(str(scratch))
    assert _answers(open_segment, 0, setup)[0][0] == DONE
    real_add = KeywordStore.add

    def add(writer: Any, docs: Any) -> None:
        real_add(writer, docs)
        raise ValueError("refused by the writer")

    monkeypatch.setattr(KeywordStore, "add", staticmethod(add))
    assert _answers(open_segment, 1, setup) == [(FAILED, 1)]
    assert open_segment.writer is None and open_segment.claims == []
    monkeypatch.setattr(KeywordStore, "add", staticmethod(real_add))
    assert [a[0] for a in _answers(open_segment, 2, setup)] == [DONE]
    assert _answers(open_segment, pb.FINISH, setup)[0][2] == [2]  # a new segment, for the claims after


def _serve_in_thread(messages: list[Any]) -> list[Any]:
    """`serve` on one end of a pipe, in a thread; every message sent at once; its answers till it ends."""
    from multiprocessing import Pipe

    from core.index.segment_worker import serve

    ours, theirs = Pipe()
    thread = threading.Thread(target=serve, args=(theirs,), daemon=True)
    for message in messages:
        ours.send(message)
    thread.start()
    answers = []
    while not answers or answers[-1][0] not in (FINISHED,) and not (answers[-1][0] == FAILED and answers[-1][1] == pb.FINISH):
        assert ours.poll(30), "the worker did not answer"
        answers.append(ours.recv())
    ours.close()
    thread.join(10)
    assert not thread.is_alive()
    return answers


def test_finish_waiting_behind_the_last_claim_is_answered_after_it(tmp_path: Path) -> None:
    """FINISH already there when the last claim is done: the segment is finished first, but the claim's
    answer still comes first (its notes are what the segment's claims name)."""
    root = write_vault(tmp_path / "vault", 4)
    entries = [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, 0) for p in sorted(root.rglob("*.md"))]
    scratch = tmp_path / "building"
    scratch.mkdir()
    claims = [[(e, None) for e in entries[:2]], [(e, None) for e in entries[2:]]]
    setup = ("v", claims, ChunkLimits(), 200_000, str(scratch), (1000, 1 << 30))
    answers = _serve_in_thread([setup, 0, 1, pb.FINISH])
    assert [a[0] for a in answers] == [DONE, DONE, FINISHED]
    assert answers[-1][2] == [0, 1] and answers[-1][1] is not None


def test_an_answer_that_will_not_pickle_fails_its_claim_and_the_finish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.index.segment_worker as sw

    def answers(open_segment: Any, claim: int, setup: Any) -> list[Any]:
        return [(FINISHED, None, [])] if claim == pb.FINISH else [(DONE, claim, [lambda: None], [None])]

    monkeypatch.setattr(sw, "_answers", answers)
    setup = ("v", [[]], ChunkLimits(), 200_000, str(tmp_path), (1000, 1 << 30))
    assert _serve_in_thread([setup, 0, pb.FINISH]) == [(FAILED, 0), (FAILED, pb.FINISH)]


def _tocs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The segments of every table of contents written from now on (one per commit)."""
    from core.index.fast_writer import FastSegmentWriter

    written: list[int] = []
    real = FastSegmentWriter._commit_toc

    def counting(writer: Any, segments: Any) -> None:
        written.append(len(segments))
        real(writer, segments)

    monkeypatch.setattr(FastSegmentWriter, "_commit_toc", counting)
    return written


@pytest.mark.parametrize("bound", [1000, 1])
def test_a_first_parallel_index_is_one_commit(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int) -> None:
    """Many claims, one table of contents: this process's segment and the worker's, listed together;
    with a segment bound of one note the worker finishes a segment every claim, all in that one commit."""
    import core.index.segment_worker as sw

    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain.sync()
    spy = Spy(monkeypatch, worker=True)
    monkeypatch.setattr(sw, "SEGMENT_NOTES", bound)
    tocs = _tocs(monkeypatch)
    fast = _index(vault, tmp_path / "b")
    fast.sync()
    assert spy.built >= 1 and spy.local >= 1
    assert len(tocs) == 1 and tocs[0] == spy.built + 1  # the worker's segments and this process's
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
    assert plain.links._notes == fast.links._notes


def test_a_note_the_writer_refuses_is_skipped_and_the_rest_go_in(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's open writer refuses a note: its notes go note by note, the one note is skipped
    with its reason, and every other note (the worker's too) is indexed."""
    from core.index.keyword_store import KeywordStore

    (vault / "zz-refused.md").write_text("# Refused\n\nThe writer will not take this one.\n", encoding="utf-8")
    real_add = KeywordStore.add

    def add(writer: Any, docs: Any) -> None:
        docs = list(docs)
        if any(d.rel_path == "zz-refused.md" for d in docs):
            raise ValueError("refused by the writer")
        real_add(writer, docs)

    monkeypatch.setattr(KeywordStore, "add", staticmethod(add))  # this process only: the worker is spawned
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    plain_stats = plain.sync()
    spy = Spy(monkeypatch, worker=True)
    fast = _index(vault, tmp_path / "b")
    stats = fast.sync()
    assert spy.built >= 1 and spy.local >= 1  # the last claim (this note's) is this process's first
    assert stats.documents == plain_stats.documents == 61
    assert "zz-refused.md" not in fast.files
    assert [s.rel_path for s in fast.info.skipped if "refused" in s.detail] == ["zz-refused.md"]
    assert fast.files == plain.files
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)
