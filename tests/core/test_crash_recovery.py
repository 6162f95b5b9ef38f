"""A crash at any moment leaves an index that the next start brings back, without a rebuild.

The kill -9 tests run a child process (tests/crash_harness.py) that edits a vault through the
live path or a full sync, kill it at seeded random moments, then check the recovered index
against one built from scratch. The unit tests below pin the individual recovery paths.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

import core.index.index_open
import core.index.indexer
import core.index.intake
from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.vault.notes import document_version
from tests import crash_harness as harness
from tests.helpers import BagOfWordsEmbedder

VAULT = harness.VAULT


def bow_engine(home: Path) -> Engine:
    return Engine(AppPaths(home), embedder_factory=lambda vc: BagOfWordsEmbedder())


def found(engine: Engine, query: str) -> set[str]:
    resp = engine.search(SearchRequest(query, mode="keyword", k=50, filters=SearchFilters(allow_restricted=True)))
    return {h.chunk.rel_path for h in resp.hits}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    harness.make_vault(root, 40, seed=3)
    return root


@pytest.fixture
def built(vault: Path, cairn_home: Path) -> Path:
    harness.build(cairn_home, vault)
    return cairn_home


# -- kill -9 at random moments ----------------------------------------------------------------


@pytest.mark.parametrize("mode", harness.MODES)
def test_kill_9_at_random_moments_recovers_without_a_rebuild(mode: str, vault: Path, built: Path, tmp_path: Path) -> None:
    rng = random.Random(f"crash-{mode}")
    for trial in range(3):
        journal = tmp_path / f"journal-{trial}.txt"
        harness.run_child(built, vault, mode, rng.randrange(10**6), journal, kill_after=rng.uniform(0.02, 0.6))
        unflushed, edits = harness.unflushed_edits(journal)
        result = harness.recover(built, tmp_path / f"fresh-{trial}", vault, unflushed)
        where = f"{mode} trial {trial} ({edits} edits, recovery={result.recovery})"
        assert result.problems == [], where
        assert not result.full_rebuild, f"{where}: full rebuild" + (
            " — the Whoosh index itself was torn" if result.recovery == "keyword_index_damaged" else ""
        )
        assert result.reparsed <= len(unflushed), f"{where}: re-parsed {result.reparsed} notes, {len(unflushed)} edited since the last flush"
        # every chunk of an edited note may need a vector; the rest come from the embedding cache
        assert result.embedded <= 4 * len(unflushed), f"{where}: embedded {result.embedded} chunks"


def test_kill_9_during_a_first_build_never_bricks_the_data_folder(tmp_path: Path) -> None:
    """#22: 5 of 7 first builds killed at random left whoosh/chunks.tmp/, and from then on
    status, search and index ended in IsADirectoryError. Now the next start cleans up and builds.
    150 notes: Whoosh's writer (and its chunks.tmp/ folder) is open from about 0.4 s to 1.6 s
    after the child is ready, where most kills land."""
    vault = tmp_path / "vault"
    harness.make_vault(vault, 150, seed=5)
    rng = random.Random("crash-first")
    for trial in range(4):
        home = tmp_path / f"home-{trial}"
        journal = tmp_path / f"journal-first-{trial}.txt"
        harness.run_child(home, vault, harness.FIRST, rng.randrange(10**6), journal, kill_after=rng.uniform(0.3, 1.5))
        result = harness.recover(home, tmp_path / f"fresh-first-{trial}", vault, set())
        assert result.problems == [], f"first build trial {trial} (recovery={result.recovery})"


# -- deterministic crash points ---------------------------------------------------------------


def test_a_note_added_live_then_deleted_before_a_crash_leaves_no_orphan(vault: Path, built: Path) -> None:
    crashed = bow_engine(built)
    (vault / "ephemeral.md").write_text("# Ephemeral\n\nA short-lived note about zeppelins.\n")
    crashed.update_notes(VAULT, ["ephemeral.md"])
    assert found(crashed, "zeppelins") == {"ephemeral.md"}
    (vault / "ephemeral.md").unlink()  # gone from disk, and the process dies before it sees that
    restarted = bow_engine(built)
    assert restarted.index_for(VAULT).recovery == "dirty_flag"
    restarted.sync()
    assert found(restarted, "zeppelins") == set()
    assert "ephemeral.md" not in restarted.index_for(VAULT).files


def test_a_search_after_a_crash_does_not_reconcile_but_the_next_writer_does(
    vault: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed = bow_engine(built)
    (vault / "late.md").write_text("# Late\n\nA note about axolotls, indexed live.\n")
    crashed.update_notes(VAULT, ["late.md"])  # the dirty flag is set; the process dies before its flush
    reads: list[int] = []
    real = core.index.index_open.files_matching_keyword
    monkeypatch.setattr(core.index.index_open, "files_matching_keyword", lambda *a: reads.append(1) or real(*a))
    searching = bow_engine(built)
    assert found(searching, "axolotls") == {"late.md"}  # the keyword index is the truth, searched as it is
    vi = searching.index_for(VAULT)
    assert reads == [] and not vi.manifest_read and vi.recovery_found == "dirty_flag"
    assert "late.md" in vi.files  # the first use of the records reconciles them with the index
    assert reads == [1] and vi.recovery == "dirty_flag"
    searching.sync()
    assert not vi.is_dirty and vi.recovery is None and found(searching, "axolotls") == {"late.md"}


def test_a_live_edit_reverted_on_disk_before_a_crash_is_reverted_in_the_index(vault: Path, built: Path) -> None:
    note = vault / "note-004.md"
    original = note.read_bytes()
    crashed = bow_engine(built)
    note.write_text("# Note 4\n\nA draft about narwhals.\n")
    crashed.update_notes(VAULT, ["note-004.md"])
    note.write_bytes(original)  # the user undoes the edit; the crash comes first
    restarted = bow_engine(built)
    restarted.sync()
    assert found(restarted, "narwhals") == set()
    assert restarted.index_for(VAULT).files["note-004.md"].version == document_version(original)


class Crash(BaseException):
    """Stands for SIGKILL at one precise line."""


def test_a_sync_killed_between_the_keyword_commit_and_the_manifest_save_is_recovered(
    vault: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = vault / "note-008.md"
    original = note.read_bytes()
    note.write_text("# Note 8\n\nRewritten: the quokka census.\n")
    crashed = bow_engine(built)

    def die(*args: object, **kwargs: object) -> None:
        raise Crash

    monkeypatch.setattr(core.index.indexer, "save_manifest", die)
    with pytest.raises(Crash):
        crashed.sync([VAULT])  # the keyword index has the new text, the manifest the old
    monkeypatch.undo()
    note.write_bytes(original)  # reverted while Cairn was down: same bytes as the manifest says
    restarted = bow_engine(built)
    recovery = restarted.index_for(VAULT).recovery
    restarted.sync()
    assert found(restarted, "quokka") == set()
    assert recovery == "dirty_flag"  # a full sync flags its keyword commits too


def test_a_live_update_that_changes_nothing_leaves_no_dirty_flag(vault: Path, built: Path) -> None:
    engine = bow_engine(built)
    os.chmod(vault / "note-012.md", 0o600)  # same bytes, same size and mtime
    report = engine.update_notes(VAULT, ["note-012.md", "missing.md"])
    assert (report.keyword.added, report.keyword.changed, report.keyword.removed) == (0, 0, 0)
    assert not engine.is_dirty(VAULT)
    assert not engine.index_for(VAULT).dirty_path.exists()


# -- torn files -------------------------------------------------------------------------------


def chunk_rows(engine: Engine) -> list[tuple[str, int, str, str, str]]:
    return harness.keyword_rows(engine)


def test_torn_manifest_is_rebuilt_from_the_keyword_index_and_nothing_is_reparsed(
    vault: Path, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = bow_engine(built)
    rows = chunk_rows(before)
    files = dict(before.index_for(VAULT).files)
    manifest = before.index_for(VAULT).manifest_path
    before.close()
    data = manifest.read_bytes()
    manifest.write_bytes(data[: len(data) // 2])
    parsed: list[str] = []
    real_parse = core.index.intake.parse_note
    monkeypatch.setattr(core.index.intake, "parse_note", lambda vault, rel, *a, **k: parsed.append(rel) or real_parse(vault, rel, *a, **k))
    engine = bow_engine(built)
    vi = engine.index_for(VAULT)
    assert vi.recovery == "manifest_rebuilt"
    (report,) = engine.sync()
    assert parsed == []  # every note hashed once, none parsed again
    assert (report.keyword.added, report.keyword.changed, report.keyword.removed) == (0, 0, 0)
    assert report.embedding is not None and report.embedding.embedded == 0
    assert chunk_rows(engine) == rows
    assert {r: (f.version, f.chunks) for r, f in vi.files.items()} == {r: (f.version, f.chunks) for r, f in files.items()}
    assert vi.recovery is None and not vi.is_dirty
    assert harness.load_manifest(manifest) is not None


def test_corrupted_vector_file_is_rebuilt_from_the_cache_without_embedding(built: Path) -> None:
    engine = bow_engine(built)
    vectors = engine.index_for(VAULT).dir / "vectors.usearch"
    engine.close()
    data = bytearray(vectors.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = os.urandom(64)
    vectors.write_bytes(bytes(data))
    embedder = BagOfWordsEmbedder()
    engine = Engine(AppPaths(built), embedder_factory=lambda vc: embedder)
    vv = engine.vectors_for(VAULT)
    assert vv is not None and vv.status == "rebuilt"
    (report,) = engine.sync()
    assert report.embedding is not None and report.embedding.embedded == 0
    assert embedder.texts_embedded == 0
    assert harness._vector_problems(engine, "after rebuild") == []
    resp = engine.search(SearchRequest("harbour lantern", mode="semantic", k=5))
    assert resp.hits
    engine.close()
    assert bow_engine(built).vectors_for(VAULT).status == "ok"  # type: ignore[union-attr]
