"""Index + incremental sync: only what changed is read, an unchanged vault rewrites nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import core.index.indexer
import core.index.intake
from core.base.config import EngineConfig
from core.base.models import SearchFilters, SkipReason
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.indexer import SyncStats
from core.search.search import SearchRequest
from core.vault.scanner import read_note_bytes


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Recipes").mkdir(parents=True)
    (root / "Recipes" / "Soup.md").write_text("---\ntags: [recipe]\n---\n# Soup\n\nTomato and basil.\n")
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    (root / "Work.md").write_text("# Work\n\nQuarterly planning.\n")
    return root


@pytest.fixture
def engine(vault: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    eng.add_vault(vault, name="v")
    yield eng
    eng.close()


def sync(engine: Engine) -> SyncStats:
    (report,) = engine.sync(["v"], embed=False)
    assert report.embedding is None
    return report.keyword


def found(engine: Engine, query: str) -> list[str]:
    resp = engine.search(SearchRequest(query, mode="keyword", filters=SearchFilters(allow_restricted=True)))
    return [h.chunk.rel_path for h in resp.hits]


def index_snapshot(engine: Engine) -> dict[str, tuple[int, bytes]]:
    folder = engine.paths.vault_dir("v")
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(folder.rglob("*")) if p.is_file()}


def tree_digest(root: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_file() and not path.is_symlink():
                out[rel] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
            else:
                out[rel] = ("dir-or-link", 0)
    return out


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# -- first sync and no-op sync ---------------------------------------------------------------


def test_first_sync_adds_every_note(engine: Engine) -> None:
    stats = sync(engine)
    assert (stats.documents, stats.added, stats.changed, stats.removed, stats.unchanged) == (3, 3, 0, 0, 0)
    assert stats.chunks == 3 and stats.skipped == {} and stats.warnings == 0
    assert engine.index_for("v").is_built
    assert found(engine, "zucchini") == ["Garden.md"]


def test_second_sync_of_an_unchanged_vault_changes_and_rewrites_nothing(engine: Engine) -> None:
    sync(engine)
    before = index_snapshot(engine)
    assert before  # something was written the first time
    stats = sync(engine)
    assert (stats.added, stats.changed, stats.removed, stats.unchanged) == (0, 0, 0, 3)
    assert index_snapshot(engine) == before


def test_unchanged_vault_with_skipped_files_rewrites_nothing(engine: Engine, vault: Path) -> None:
    (vault / "blob.md").write_bytes(b"\x00\x01binary")
    (vault / "bad.md").write_bytes(b"---\ntitle: [\n---\nbad \xff yaml\n")
    first = sync(engine)
    assert first.skipped == {"binary": 1} and first.warnings == 2
    before = index_snapshot(engine)
    again = sync(engine)
    assert again.skipped == {"binary": 1}
    assert index_snapshot(engine) == before


def test_a_fresh_engine_on_the_same_data_dir_sees_nothing_to_do(engine: Engine) -> None:
    sync(engine)
    engine.close()
    before = index_snapshot(engine)
    other = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        (report,) = other.sync(["v"], embed=False)
        assert (report.keyword.added, report.keyword.changed, report.keyword.removed) == (0, 0, 0)
        assert other.search(SearchRequest("zucchini", mode="keyword")).hits
    finally:
        other.close()
    assert index_snapshot(engine) == before


def test_indexing_never_writes_into_the_vault(sample_vault: Path, tmp_path: Path) -> None:
    before = tree_digest(sample_vault)
    eng = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        eng.add_vault(sample_vault, name="sample")
        (report,) = eng.sync(embed=False)
        assert report.keyword.documents == 36
        eng.search(SearchRequest("lentils", mode="keyword"))
        eng.sync(embed=False)
        eng.status()
    finally:
        eng.close()
    assert tree_digest(sample_vault) == before
    assert not str(eng.paths.data_dir).startswith(str(sample_vault))


# -- changes ---------------------------------------------------------------------------------


def test_touching_mtime_without_changing_content_does_not_reparse(engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sync(engine)
    bump_mtime(vault / "Garden.md")
    parsed: list[str] = []
    real_parse = core.index.intake.parse_note
    monkeypatch.setattr(core.index.intake, "parse_note", lambda vault, rel, *a, **kw: parsed.append(rel) or real_parse(vault, rel, *a, **kw))
    stats = sync(engine)
    assert (stats.added, stats.changed, stats.removed) == (0, 0, 0)
    assert parsed == []
    assert found(engine, "zucchini") == ["Garden.md"]
    # and the new mtime was remembered: the next sync does not even read the file
    reads: list[str] = []
    monkeypatch.setattr(core.index.intake, "read_note_bytes", lambda entry, *a: reads.append(entry.rel_path) or read_note_bytes(entry, *a))
    sync(engine)
    assert reads == []


def test_editing_a_note_reindexes_it_and_search_sees_only_the_new_text(engine: Engine, vault: Path) -> None:
    sync(engine)
    path = vault / "Garden.md"
    path.write_text("# Garden\n\nPlant the pumpkins in June.\n")
    bump_mtime(path)
    stats = sync(engine)
    assert (stats.added, stats.changed, stats.removed) == (0, 1, 0)
    assert stats.changed_paths == ("Garden.md",)
    assert found(engine, "pumpkins") == ["Garden.md"]
    assert found(engine, "zucchini") == []


def test_edit_that_keeps_size_and_mtime_is_trusted_as_unchanged(engine: Engine, vault: Path) -> None:
    """Documented trade-off: size + mtime equal means unchanged (like git and rsync)."""
    sync(engine)
    path = vault / "Work.md"
    st = path.stat()
    path.write_text("# Work\n\nQuarterly plannin!.\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert sync(engine).changed == 0


def test_deleting_a_note_removes_it_from_the_index(engine: Engine, vault: Path) -> None:
    sync(engine)
    (vault / "Garden.md").unlink()
    stats = sync(engine)
    assert (stats.added, stats.changed, stats.removed, stats.documents) == (0, 0, 1, 2)
    assert stats.removed_paths == ("Garden.md",)
    assert found(engine, "zucchini") == []


def test_adding_a_note_is_added(engine: Engine, vault: Path) -> None:
    sync(engine)
    (vault / "Recipes" / "Bread.md").write_text("# Bread\n\nSourdough starter.\n")
    stats = sync(engine)
    assert (stats.added, stats.changed, stats.removed, stats.documents) == (1, 0, 0, 4)
    assert found(engine, "sourdough") == ["Recipes/Bread.md"]


def test_renaming_a_note_is_a_remove_and_an_add(engine: Engine, vault: Path) -> None:
    sync(engine)
    (vault / "Garden.md").rename(vault / "Allotment.md")
    stats = sync(engine)
    assert (stats.added, stats.removed) == (1, 1)
    assert found(engine, "zucchini") == ["Allotment.md"]


def test_note_that_becomes_ignored_is_removed(engine: Engine, vault: Path) -> None:
    sync(engine)
    (vault / ".cairnignore").write_text("Recipes/\n")
    stats = sync(engine)
    assert stats.removed == 1 and found(engine, "basil") == []


def test_note_that_becomes_binary_is_removed_and_reported(engine: Engine, vault: Path) -> None:
    sync(engine)
    path = vault / "Work.md"
    path.write_bytes(b"\x00\x00 now binary")
    bump_mtime(path)
    stats = sync(engine)
    assert stats.removed == 1 and stats.skipped == {"binary": 1}
    assert found(engine, "quarterly") == []
    assert [(s.rel_path, s.reason) for s in engine.index_for("v").info.skipped] == [("Work.md", SkipReason.BINARY)]


def test_note_that_vanishes_between_scan_and_read_is_skipped_not_fatal(
    engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def vanish_then_read(entry, *args):  # type: ignore[no-untyped-def]
        if entry.rel_path == "Garden.md":
            entry.path.unlink()
        return read_note_bytes(entry, *args)

    monkeypatch.setattr(core.index.intake, "read_note_bytes", vanish_then_read)
    stats = sync(engine)
    assert stats.documents == 2 and stats.skipped == {"unreadable": 1}
    (skip,) = engine.index_for("v").info.skipped
    assert skip.rel_path == "Garden.md" and "vanished" in skip.detail


def test_changing_chunk_limits_rebuilds_every_note(engine: Engine, vault: Path) -> None:
    sync(engine)
    engine.close()
    small = Engine(AppPaths.from_env(), EngineConfig(vaults=engine.config.vaults, soft_chars=20, hard_chars=40), embedder_factory=None)
    try:
        (report,) = small.sync(["v"], embed=False)
        assert report.keyword.added == 3
        assert small.search(SearchRequest("zucchini", mode="keyword")).hits
    finally:
        small.close()


def test_missing_vault_folder_is_an_error_not_an_empty_index(engine: Engine, vault: Path) -> None:
    sync(engine)
    shutil.rmtree(vault)
    with pytest.raises(FileNotFoundError):
        sync(engine)
    assert found(engine, "zucchini") == ["Garden.md"]  # the old index is left alone


def test_update_paths_keeps_a_note_whose_name_on_disk_is_nfd(engine: Engine, vault: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Café.md")
    (vault / nfd).write_text("# Café\n\nespresso notes\n")
    sync(engine)
    nfc = unicodedata.normalize("NFC", "Café.md")
    assert found(engine, "espresso") == [nfc]
    (vault / nfd).write_text("# Café\n\nflat white notes\n")
    stats = engine.index_for("v").update_paths([nfd])
    assert (stats.changed, stats.removed) == (1, 0)
    assert found(engine, "flat white") == [nfc]
    assert [d.rel_path for d in engine.index_for("v").documents_for([nfc])] == [nfc]


# -- health record ---------------------------------------------------------------------------


def test_warnings_are_recorded_per_note_and_replaced_on_reparse(engine: Engine, vault: Path) -> None:
    path = vault / "Bad.md"
    path.write_bytes(b"---\ntitle: [\n---\nbody\n")
    sync(engine)
    assert [(w.rel_path, w.code) for w in engine.index_for("v").info.warnings] == [("Bad.md", "front_matter")]
    path.write_bytes(b"---\ntitle: fixed\n---\nbody \n")
    bump_mtime(path)
    sync(engine)
    assert engine.index_for("v").info.warnings == ()


def test_update_paths_reindexes_only_the_named_notes(engine: Engine, vault: Path) -> None:
    sync(engine)
    (vault / "Garden.md").write_text("# Garden\n\nNow it is beans.\n")
    (vault / "Work.md").unlink()
    (vault / "New.md").write_text("fresh note about kites\n")
    stats = engine.index_for("v").update_paths(["Garden.md", "Work.md", "New.md"])
    assert (stats.added, stats.changed, stats.removed) == (1, 1, 1)
    assert sorted(stats.changed_paths) == ["Garden.md", "New.md"] and stats.removed_paths == ("Work.md",)
    assert found(engine, "beans") == ["Garden.md"] and found(engine, "kites") == ["New.md"]
    assert found(engine, "quarterly") == []


def test_progress_reaches_the_total_even_when_the_last_note_is_skipped(engine: Engine, vault: Path) -> None:
    (vault / "zz-binary.md").write_bytes(b"\x00binary")
    calls: list[tuple[int, int, str]] = []
    engine.sync(["v"], embed=False, progress=lambda done, total, phase: calls.append((done, total, phase)))
    assert calls and calls[-1] == (4, 4, "keyword")
    assert all(done <= total for done, total, _ in calls)


class HashEmbedder:
    """A tiny deterministic embedder: bag of hashed words, unit length. No model, no network."""

    model_id = "test-hash"
    model_hash = "test-hash-v1"
    dims = 16
    max_tokens = 256

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dims, dtype=np.float32)
        for word in text.lower().split():
            v[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        v[0] += 0.01
        return v / np.linalg.norm(v)

    def embed_documents(self, texts, progress=None, cancel=None):  # type: ignore[no-untyped-def]
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


def test_second_sync_with_embeddings_rewrites_nothing(vault: Path) -> None:
    eng = Engine(AppPaths.from_env(), embedder_factory=lambda vc: HashEmbedder())
    try:
        eng.add_vault(vault, name="v")
        (first,) = eng.sync(["v"])
        assert first.embedding is not None and first.embedding.embedded == 3
        before = index_snapshot(eng)
        (second,) = eng.sync(["v"])
        assert second.embedding is not None and second.embedding.embedded == 0
        assert index_snapshot(eng) == before
    finally:
        eng.close()
