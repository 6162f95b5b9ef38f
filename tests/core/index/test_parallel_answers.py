"""What the parallel build's worker answers for each note: what this process needs of it (its manifest
record, link-graph data, warnings), not the parsed note; and every way its notes come back to be read
here (a refused segment, a claim the worker fails) builds the index a one-process build makes."""

from __future__ import annotations

import os
import pickle
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import core.base.spare_core as sc
import core.index.build_intake as bi
import core.index.parallel_build as pb
from core.base.models import Document
from core.index.bulk_writer import BulkWriter
from core.index.intake import NoteIntake
from core.index.records import record_for
from core.index.segment_worker import IndexedNote, build_job, read_note
from core.index.sync_report import SyncStats
from core.vault.chunker import ChunkLimits
from core.vault.scanner import ScanEntry
from tests.core.index.test_parallel_build import Spy, _assert_same_index, _index, _with_bad_files
from tests.fixture_notes import write_vault


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    """60 generated notes, every sixth with a task whose date is no date (a warning), and the bad files."""
    root = write_vault(tmp_path / "vault", 60)
    for i, path in enumerate(sorted(root.rglob("*.md"))):
        if i % 6 == 0:
            path.write_text(path.read_text(encoding="utf-8") + f"\n- [ ] a task 📅 2024-02-{30 + i % 2}\n", encoding="utf-8")
    return _with_bad_files(root)


def _entries(root: Path) -> list[ScanEntry]:
    return [ScanEntry(p.relative_to(root).as_posix(), p, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*.md"))]


def _plain(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, SyncStats]:
    Spy(monkeypatch, worker=False)
    plain = _index(vault, tmp_path / "a")
    return plain, plain.sync()


def _same(plain: Any, plain_stats: SyncStats, fast: Any, stats: SyncStats) -> None:
    """The same index, manifest, link graph and sync report as the one-process build's."""
    assert (stats.documents, stats.added, stats.changed, stats.warnings, stats.skipped) == (
        plain_stats.documents,
        plain_stats.added,
        plain_stats.changed,
        plain_stats.warnings,
        plain_stats.skipped,
    )
    assert fast.info.warnings == plain.info.warnings
    assert fast.files == plain.files
    assert plain.links._notes == fast.links._notes
    _assert_same_index(plain.keyword._ix, fast.keyword._ix)


def test_each_note_is_answered_with_its_record_links_and_warnings(vault: Path, tmp_path: Path) -> None:
    """The worker's answer holds what this process made of the parsed note before, and far fewer bytes."""
    entries = [e for e in _entries(vault) if e.size < 200_000]
    scratch = tmp_path / "building"
    scratch.mkdir()
    answers, built = build_job("v", [(e, None) for e in entries], ChunkLimits(), 200_000, str(scratch))
    assert built is not None
    docs = [read_note("v", e, None, ChunkLimits(), 200_000) for e in entries]
    notes = [a for a in answers if isinstance(a, IndexedNote)]
    assert len(notes) == len([d for d in docs if isinstance(d, Document)]) >= 60
    assert any(n.warnings for n in notes) and any(n.links for n in notes) and any(n.aliases for n in notes)
    for answer, doc in zip(answers, docs, strict=True):
        if not isinstance(doc, Document):
            assert answer == doc  # a skip, as before
            continue
        assert isinstance(answer, IndexedNote)
        assert answer.record == record_for(doc)
        assert (answer.rel_path, answer.document_version, answer.aliases, answer.links, answer.warnings) == (
            doc.rel_path,
            doc.document_version,
            doc.aliases,
            doc.links,
            doc.warnings,
        )
    assert len(pickle.dumps(answers)) < len(pickle.dumps(docs))


DEMO = next((p / "shared/data/vaults/obsidian-tasks-demo" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults").is_dir()), None)


def test_an_answer_pickles_to_an_equal_answer_of_the_same_types(vault: Path, tmp_path: Path) -> None:
    """`IndexedNote.__reduce__` (field values as tuples, rebuilt by the constructors): every answer of the
    fixture vault and of the Tasks demo vault (tasks of every status and date, links, warnings) comes back
    equal, field by field and type by type."""
    roots = [vault, *([DEMO] if DEMO is not None and DEMO.is_dir() else [])]
    notes = [
        n
        for root in roots
        for e in _entries(root)
        if isinstance(n := read_note("v", e, None, ChunkLimits(), 200_000), Document)
    ]
    answers = [IndexedNote.of(n) for n in notes]
    assert sum(len(a.record.tasks) for a in answers) > 50 and any(a.links for a in answers) and any(a.warnings for a in answers)
    back = pickle.loads(pickle.dumps(answers))
    assert back == answers
    for got, want in zip(back, answers, strict=True):
        assert type(got.record.chunks) is tuple and type(got.record.tasks) is tuple and type(got.links) is tuple
        assert [type(t.status) for t in got.record.tasks] == [type(t.status) for t in want.record.tasks]
        assert [type(link.kind) for link in got.links] == [type(link.kind) for link in want.links]
        assert got.record.to_json() == want.record.to_json()
        # The manifest's row made where the note was indexed travels with it: the save only joins rows.
        assert got.record._row is not None and got.record._row == want.record.encoded()


def _refusing(monkeypatch: pytest.MonkeyPatch, before: Any = None) -> list[int]:
    """Every commit holding a worker's segment fails (a full disk, say), after `before` ran."""
    real_commit = BulkWriter.commit
    refused: list[int] = []

    def refuse(writer: BulkWriter, stale: Any, built: Any) -> None:
        if built:
            refused.append(len(built))
            if before is not None:
                before()
            writer.cancel()
            raise OSError("disk full")
        real_commit(writer, stale, built)

    monkeypatch.setattr(BulkWriter, "commit", refuse)
    return refused


def _worker_notes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notes the worker's segments held, as they come in."""
    seen: list[str] = []
    real = bi.OneCommit.built

    def built(one: Any, unit: pb.BuiltJob) -> None:
        seen.extend(n.rel_path for n in unit.outcomes if isinstance(n, IndexedNote))
        real(one, unit)

    monkeypatch.setattr(bi.OneCommit, "built", built)
    return seen


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notes read in this process."""
    read: list[str] = []
    real = NoteIntake.read

    def reading(intake: NoteIntake, entry: ScanEntry, old: Any, attachments: Any) -> Any:
        read.append(entry.rel_path)
        return real(intake, entry, old, attachments)

    monkeypatch.setattr(NoteIntake, "read", reading)
    return read


def test_a_refused_segments_notes_are_read_again_here_and_counted_once(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, plain_stats = _plain(vault, tmp_path, monkeypatch)
    spy = Spy(monkeypatch, worker=True)
    refused = _refusing(monkeypatch)
    worker, read = _worker_notes(monkeypatch), _reads(monkeypatch)
    fast = _index(vault, tmp_path / "b")
    stats = fast.sync()
    assert spy.built >= 1 and refused and worker
    assert set(worker) <= set(read) and len(read) == len(set(read))  # the worker's notes read here too, each once
    _same(plain, plain_stats, fast, stats)


def test_a_refused_segments_note_broken_meanwhile_is_skipped_not_counted(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note the worker indexed turns binary before its segment is refused: read again, it is a skip."""
    Spy(monkeypatch, worker=True)
    worker = _worker_notes(monkeypatch)
    broken: list[str] = []

    def break_one() -> None:
        if not broken:
            broken.append(worker[0])
            (vault / worker[0]).write_bytes(b"# now binary\x00\x01")

    _refusing(monkeypatch, break_one)
    fast = _index(vault, tmp_path / "b")
    stats = fast.sync()
    assert broken and broken[0] not in fast.files and broken[0] not in fast.links._notes
    assert broken[0] in {s.rel_path for s in fast.info.skipped}
    plain, plain_stats = _plain(vault, tmp_path, monkeypatch)  # the vault as it is now
    assert plain_stats.documents == stats.documents == 60
    _same(plain, plain_stats, fast, stats)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked on Linux only")
def test_a_claim_the_forked_worker_fails_is_read_here(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's writer refuses a note (this process's would take it): the claim fails, and it and
    every claim of the dropped open segment are read and indexed here."""
    if threading.active_count() != 1:
        pytest.skip("the test runner has threads of its own: nothing may be forked here")
    from core.index.keyword_store import KeywordStore

    plain, plain_stats = _plain(vault, tmp_path, monkeypatch)
    spy = Spy(monkeypatch, worker=True)
    parent, first = os.getpid(), _entries(vault)[9].rel_path  # in the worker's second claim of seven notes
    real_add = KeywordStore.add

    def add(writer: Any, docs: Any) -> None:
        docs = list(docs)
        if os.getpid() != parent and any(d.rel_path == first for d in docs):
            raise ValueError("refused by the worker's writer")
        real_add(writer, docs)

    monkeypatch.setattr(KeywordStore, "add", staticmethod(add))  # inherited by the forked worker
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    read = _reads(monkeypatch)
    sc.prestart(pb.WORKER_TARGET, pb.WORKER_NAME, fork_later=True)
    fast = _index(vault, tmp_path / "b")
    stats = fast.sync()
    assert spy.local >= 2 and first in read and _entries(vault)[0].rel_path in read  # the dropped segment's first claim too
    _same(plain, plain_stats, fast, stats)


def test_the_embedding_pass_reads_the_same_texts_after_a_two_process_build(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedding pass takes its texts from the keyword index, the manifest and the link graph's
    aliases, never from the worker's answers: its inputs are the one-process build's."""
    from core.semantic import VaultTexts

    plain, _ = _plain(vault, tmp_path, monkeypatch)
    spy = Spy(monkeypatch, worker=True)
    fast = _index(vault, tmp_path / "b")
    fast.sync()
    assert spy.built >= 1
    refs = sorted((rel, c.ordinal) for rel, rec in plain.files.items() for c in rec.chunks)
    firsts = sorted((rel, rec.chunks[0].ordinal) for rel, rec in plain.files.items() if rec.chunks)
    texts = [VaultTexts(index.vault, index) for index in (plain, fast)]
    assert texts[0].for_chunks(refs) == texts[1].for_chunks(refs) and len(texts[0].for_chunks(refs)) == len(refs)
    assert texts[0].for_notes(firsts) == texts[1].for_notes(firsts)
