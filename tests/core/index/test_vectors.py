"""Vector index, persistence, embedding cache and model identity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.base.models import SearchFilters, chunk_id
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.embed_cache import EmbeddingCache
from core.index.vector_index import VectorIndex, key_for
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder


def unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    v = rng.standard_normal((n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_usearch_is_created_with_f16_and_cosine() -> None:
    vi = VectorIndex(8)
    assert vi._usearch is None  # made on first use: a keyword search never loads usearch
    assert "F16" in str(vi._hnsw().dtype).upper()
    assert "COS" in str(vi._hnsw().metric).upper()


def test_exact_and_hnsw_paths_agree_and_replace_updates_a_vector() -> None:
    rng = np.random.default_rng(1)
    vecs = unit(rng, 500, 16)
    keys = list(range(1, 501))
    exact = VectorIndex(16, exact_below=10_000)
    hnsw = VectorIndex(16, exact_below=1)
    exact.add(keys, vecs)
    hnsw.add(keys, vecs)
    q = vecs[42]
    assert exact.search(q, 1)[0][0] == 43
    assert hnsw.search(q, 1)[0][0] == 43
    exact.add([43], -vecs[42:43])  # usearch has no update: add() replaces
    assert exact.search(q, 1)[0][0] != 43
    assert len(exact) == 500


def test_remove_then_search_never_returns_removed_keys() -> None:
    rng = np.random.default_rng(2)
    vi = VectorIndex(8)
    vi.add(range(1, 101), unit(rng, 100, 8))
    vi.remove(range(1, 51))
    assert len(vi) == 50
    found = {k for k, _ in vi.search(unit(rng, 1, 8)[0], 100)}
    assert found == set(range(51, 101))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vi = VectorIndex(8)
    vecs = unit(rng, 20, 8)
    vi.add(range(10, 30), vecs)
    vi.remove([10])
    vi.save(tmp_path / "v.usearch")
    loaded = VectorIndex.load(tmp_path / "v.usearch")
    assert sorted(int(k) for k in loaded.keys()) == list(range(11, 30))
    assert loaded.search(vecs[5], 1)[0][0] == 15


def test_a_loaded_index_searches_through_hnsw_without_a_float32_copy(tmp_path: Path) -> None:
    """The float32 matrix is made only when an exact search, a mask or a change needs it."""
    rng = np.random.default_rng(5)
    vecs = unit(rng, 300, 16)
    vi = VectorIndex(16, exact_below=100)
    vi.add(range(300), vecs)
    vi.save(tmp_path / "v.usearch")
    loaded = VectorIndex.load(tmp_path / "v.usearch", exact_below=100)
    assert loaded.search(vecs[7], 3)[0][0] == 7  # 300 >= exact_below: HNSW
    assert loaded._matrix is None
    allowed = np.zeros(300, dtype=bool)
    allowed[loaded.keys() % 2 == 0] = True
    masked = loaded.search(vecs[7], 5, allowed)  # a mask needs the exact path, so the matrix
    assert loaded._matrix is not None
    assert all(k % 2 == 0 for k, _ in masked)
    np.testing.assert_allclose(loaded.vector(9), vecs[9], atol=2e-3)  # f16 in the file


def test_a_few_vectors_are_read_by_key_with_or_without_the_float32_copy(tmp_path: Path) -> None:
    """`vectors` (a note's passages compared at search time) reads a loaded index's vectors from usearch."""
    rng = np.random.default_rng(6)
    vecs = unit(rng, 300, 16)
    vi = VectorIndex(16, exact_below=100)
    vi.add(range(300), vecs)
    got = vi.vectors([4, 7, 999])
    assert sorted(got) == [4, 7]  # a key the index lacks is left out
    np.testing.assert_allclose(got[7], vecs[7], atol=1e-6)
    vi.save(tmp_path / "v.usearch")
    loaded = VectorIndex.load(tmp_path / "v.usearch", exact_below=100)
    got = loaded.vectors([4, 7, 999])
    assert loaded._matrix is None  # two vectors do not make the 300-row copy
    assert sorted(got) == [4, 7]
    np.testing.assert_allclose(got[4], vecs[4], atol=2e-3)  # f16 in the file


def test_changes_to_a_loaded_index_keep_every_vector(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    vecs = unit(rng, 50, 8)
    vi = VectorIndex(8)
    vi.add(range(50), vecs)
    vi.save(tmp_path / "v.usearch")
    loaded = VectorIndex.load(tmp_path / "v.usearch")
    loaded.remove([3, 4])
    extra = unit(rng, 60, 8)  # more than the loaded rows: the matrix grows
    loaded.add(range(100, 160), extra)
    assert len(loaded) == 108
    assert loaded.search(vecs[20], 1)[0][0] == 20
    assert loaded.search(extra[55], 1)[0][0] == 155
    assert 3 not in loaded and loaded.vector(3) is None
    np.testing.assert_allclose(loaded.vector(49), vecs[49], atol=2e-3)


def test_a_loaded_index_maps_its_file_and_copies_it_on_the_first_change(tmp_path: Path) -> None:
    """Opening maps the usearch file (no heap copy); a change works on a private copy, never on the file."""
    rng = np.random.default_rng(8)
    vecs = unit(rng, 300, 16)
    vi = VectorIndex(16, exact_below=100)
    vi.add(range(300), vecs)
    path = tmp_path / "v.usearch"
    vi.save(path)
    before = path.read_bytes()
    loaded = VectorIndex.load(path, exact_below=100, mapped=True)
    assert loaded._mapped
    assert loaded.search(vecs[7], 1)[0][0] == 7
    loaded.add([1000], unit(rng, 1, 16))
    loaded.remove([7])
    assert not loaded._mapped
    assert 7 not in [k for k, _ in loaded.search(vecs[7], 3)]
    assert path.read_bytes() == before  # the mapped file was never written
    path.unlink()  # replaced or removed by another process: this copy is its own
    assert loaded.search(vecs[8], 1)[0][0] == 8
    loaded.save(tmp_path / "again.usearch")
    assert len(VectorIndex.load(tmp_path / "again.usearch", mapped=True)) == 300


def test_mask_limits_results_to_allowed_rows() -> None:
    rng = np.random.default_rng(4)
    vi = VectorIndex(8)
    vi.add(range(1, 11), unit(rng, 10, 8))
    keys = vi.keys()
    mask = np.isin(keys, [3, 7])
    assert {k for k, _ in vi.search(unit(rng, 1, 8)[0], 10, mask)} == {3, 7}


def test_keys_are_stable_63_bit_integers() -> None:
    assert key_for(chunk_id("v", "a.md", 0)) == key_for(chunk_id("v", "a.md", 0))
    assert key_for(chunk_id("v", "a.md", 0)) != key_for(chunk_id("v", "a.md", 1))
    assert 0 <= key_for("x") < 2**63


def test_embedding_cache_survives_a_restart(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, "model-a", 4)
    cache.put("h1", np.array([1, 0, 0, 0], np.float32))
    cache.flush()
    again = EmbeddingCache(tmp_path, "model-a", 4)
    assert again.get("h1") is not None and again.get("h2") is None
    assert EmbeddingCache(tmp_path, "model-b", 4).get("h1") is None  # keyed by model


def make_engine(home: Path, vault: Path, embedder: BagOfWordsEmbedder) -> tuple[Engine, str]:
    engine = Engine(AppPaths(home), embedder_factory=lambda vc: embedder)
    return engine, engine.add_vault(vault).name


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "food").mkdir(parents=True)
    (vault / "work").mkdir()
    (vault / "food" / "bread.md").write_text("---\ntags: [baking]\ndate: 2026-01-02\n---\n# Bread\n\nSourdough loaf rests overnight in the fridge.\n")
    (vault / "food" / "soup.md").write_text("---\ntags: [soup]\n---\n# Soup\n\nRoast tomatoes at 220 C, then blend.\n")
    (vault / "work" / "deploy.md").write_text("# Deploy\n\nThe release goes out on Fridays after the checklist.\n")
    (vault / "work" / "secret.md").write_text("---\nconfidentiality: restricted\n---\n# Pay\n\nSourdough salary bands.\n")
    return vault


def test_restart_on_unchanged_vault_embeds_nothing(tmp_path: Path, small_vault: Path) -> None:
    emb = BagOfWordsEmbedder()
    engine, name = make_engine(tmp_path / "home", small_vault, emb)
    first = engine.sync([name])[0].embedding
    assert first is not None and first.embedded == first.desired > 0
    engine.close()
    emb2 = BagOfWordsEmbedder()
    engine2, _ = make_engine(tmp_path / "home", small_vault, emb2)
    again = engine2.sync([name])[0].embedding
    assert again is not None and again.embedded == 0 and emb2.texts_embedded == 0
    resp = engine2.search(SearchRequest("fridge loaf", mode="semantic"))
    assert resp.hits and resp.hits[0].chunk.rel_path == "food/bread.md"


def test_editing_one_note_re_embeds_only_its_changed_chunks(tmp_path: Path, small_vault: Path) -> None:
    emb = BagOfWordsEmbedder()
    engine, name = make_engine(tmp_path / "home", small_vault, emb)
    engine.sync([name])
    (small_vault / "food" / "soup.md").write_text("---\ntags: [soup]\n---\n# Soup\n\nRoast peppers instead.\n")
    stats = engine.sync([name])[0]
    assert stats.keyword.changed == 1
    assert stats.embedding is not None and stats.embedding.embedded == 1 and stats.embedding.removed == 1
    (small_vault / "food" / "soup.md").unlink()
    stats = engine.sync([name])[0]
    assert stats.embedding is not None and stats.embedding.removed == 1 and stats.embedding.embedded == 0
    assert all(h.chunk.rel_path != "food/soup.md" for h in engine.search(SearchRequest("peppers", mode="semantic")).hits)


def test_model_change_is_reported_and_the_vault_re_embeds(tmp_path: Path, small_vault: Path) -> None:
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder("bow-v1"))
    engine.sync([name])
    engine.close()
    other = BagOfWordsEmbedder("bow-v2")
    engine2, _ = make_engine(tmp_path / "home", small_vault, other)
    assert engine2.vectors_for(name).status == "model_mismatch"  # type: ignore[union-attr]
    resp = engine2.search(SearchRequest("fridge loaf", mode="semantic"))
    assert resp.mode == "keyword" and any("fallback=keyword" in w for w in resp.warnings)
    stats = engine2.sync([name])[0].embedding
    assert stats is not None and stats.embedded == stats.desired
    assert engine2.search(SearchRequest("fridge loaf", mode="semantic")).mode == "semantic"


def test_corrupted_vector_file_is_rebuilt_from_the_cache_without_embedding(tmp_path: Path, small_vault: Path) -> None:
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    engine.sync([name])
    path = engine.vectors_for(name).index_path  # type: ignore[union-attr]
    engine.close()
    path.write_bytes(b"garbage" * 10)
    emb = BagOfWordsEmbedder()
    engine2, _ = make_engine(tmp_path / "home", small_vault, emb)
    vv = engine2.vectors_for(name)
    assert vv is not None and vv.status == "rebuilt" and len(vv.index) > 0
    stats = engine2.sync([name])[0].embedding
    assert stats is not None and stats.embedded == 0 and emb.texts_embedded == 0


def test_hybrid_hits_explain_both_lists_and_sum_to_score(tmp_path: Path, small_vault: Path) -> None:
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    engine.sync([name])
    resp = engine.search(SearchRequest("sourdough loaf", mode="hybrid"))
    top = resp.hits[0]
    assert top.chunk.rel_path == "food/bread.md"
    assert top.bm25 is not None and top.vector is not None
    assert sum(t.value for t in top.contributions) == pytest.approx(top.score)
    assert {c.chunk_id for c in resp.keyword_candidates} and {c.chunk_id for c in resp.vector_candidates}


def test_filters_apply_to_both_lists(tmp_path: Path, small_vault: Path) -> None:
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    engine.sync([name])
    for mode in ("keyword", "semantic", "hybrid"):
        resp = engine.search(SearchRequest("sourdough release tomatoes", mode=mode, filters=SearchFilters(folders=("work",))))
        assert resp.hits and all(h.chunk.rel_path.startswith("work/") for h in resp.hits), mode
        assert all(h.chunk.rel_path != "work/secret.md" for h in resp.hits), mode
        tagged = engine.search(SearchRequest("sourdough tomatoes", mode=mode, filters=SearchFilters(tags=("soup",))))
        assert [h.chunk.rel_path for h in tagged.hits] == ["food/soup.md"], mode
        restricted = engine.search(SearchRequest("salary", mode=mode, filters=SearchFilters(allow_restricted=True)))
        assert any(h.chunk.rel_path == "work/secret.md" for h in restricted.hits), mode


def test_semantic_without_embedder_falls_back_to_keyword_with_a_warning(tmp_path: Path, small_vault: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    engine.add_vault(small_vault)
    engine.sync()
    for mode in ("semantic", "hybrid"):
        resp = engine.search(SearchRequest("sourdough", mode=mode))
        assert resp.mode == "keyword" and resp.requested_mode == mode
        assert any(w.startswith("semantic unavailable; fallback=keyword") for w in resp.warnings)
        assert resp.hits[0].vector is None


def test_partial_embedding_is_reported_while_search_works(tmp_path: Path, small_vault: Path) -> None:
    import threading

    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    for i in range(80):
        (small_vault / "work" / f"n{i}.md").write_text(f"# Note {i}\n\nfiller words number {i}\n")
    engine.sync([name], embed=False)
    cancel = threading.Event()

    def stop_after_first(done: int, total: int, phase: str) -> None:
        if phase == "embedding":
            cancel.set()

    stats = engine.embed_vault(name, progress=stop_after_first, cancel=cancel)
    assert stats is not None and stats.cancelled
    resp = engine.search(SearchRequest("filler words", mode="hybrid"))
    assert resp.hits
    assert any(w.startswith(f"{name}: semantic: ") and w.endswith("% embedded") for w in resp.warnings)  # names the vault


def test_similar_notes_excludes_the_note_itself(tmp_path: Path, small_vault: Path) -> None:
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    engine.sync([name])
    similar = engine.similar(name, "food/bread.md", k=5)
    assert similar and all(rel != "food/bread.md" for rel, _, _ in similar)


def test_searches_past_the_admission_bound_get_busy(tmp_path: Path, small_vault: Path) -> None:
    from core.base.errors import BusyError

    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None, max_concurrent_searches=1)
    engine.add_vault(small_vault)
    engine.sync()
    with engine._admission:
        with pytest.raises(BusyError) as info:
            engine.search(SearchRequest("bread"))
    assert info.value.retry_after_seconds > 0
    assert engine.search(SearchRequest("bread")).hits


def test_most_recently_edited_notes_are_embedded_first(tmp_path: Path, small_vault: Path) -> None:
    import os
    import threading

    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    for i in range(60):
        note = small_vault / "work" / f"n{i:02}.md"
        note.write_text(f"# Note {i}\n\nfiller words number {i}\n")
        os.utime(note, ns=(1_000_000_000 * (1_000 + i), 1_000_000_000 * (1_000 + i)))  # n59 is the newest
    fresh = small_vault / "work" / "n00.md"  # alphabetically first, but edited long ago ...
    latest = small_vault / "work" / "zz-today.md"  # ... while this one was saved just now
    latest.write_text("# Today\n\nplanned the garden beds\n")
    engine.sync([name], embed=False)
    cancel = threading.Event()

    def stop_after_first_batch(done: int, total: int, phase: str) -> None:
        if done > 0:  # one-passage notes go straight to the passage pass (no stand-in to replace)
            cancel.set()

    engine.embed_vault(name, progress=stop_after_first_batch, cancel=cancel)
    vv = engine.vectors_for(name)
    assert vv is not None
    embedded = {rel for rel, _ in (vv._rows_to_chunk[k] for k in vv.key_hash)}
    assert "work/zz-today.md" in embedded
    assert fresh.relative_to(small_vault).as_posix() not in embedded


def test_a_reopened_vault_searches_its_vectors_without_reading_the_manifest(tmp_path: Path, small_vault: Path) -> None:
    """The vector file names its chunks; the manifest (~0.2 s at 10k notes) waits for a filter that needs it."""
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    engine.sync([name])
    expected = engine.search(SearchRequest("sourdough salary loaf", mode="semantic"))
    engine.close()
    again, _ = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    resp = again.search(SearchRequest("sourdough salary loaf", mode="semantic"))
    vi = again.index_for(name)
    assert not vi.manifest_read
    assert [h.chunk for h in resp.hits] == [h.chunk for h in expected.hits]
    assert "work/secret.md" not in {h.chunk.rel_path for h in resp.hits}  # restricted, told by the keyword index
    allowed = again.search(SearchRequest("salary", mode="semantic", filters=SearchFilters(allow_restricted=True)))
    assert any(h.chunk.rel_path == "work/secret.md" for h in allowed.hits)
    assert not vi.manifest_read
    folder = again.search(SearchRequest("sourdough", mode="semantic", filters=SearchFilters(folders=("food",))))
    assert folder.hits and all(h.chunk.rel_path.startswith("food/") for h in folder.hits)
    assert vi.manifest_read  # a folder filter reads the manifest's records


def test_a_vault_with_new_chunks_since_the_vector_file_binds_from_the_manifest(tmp_path: Path, small_vault: Path) -> None:
    """New notes indexed without embedding: the saved counts no longer hold, so coverage comes from the manifest."""
    engine, name = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    engine.sync([name])
    engine.close()
    (small_vault / "food" / "stew.md").write_text("# Stew\n\nBeans simmer for an hour.\n")
    keyword_only = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    keyword_only.sync([name], embed=False)
    keyword_only.close()
    again, _ = make_engine(tmp_path / "home", small_vault, BagOfWordsEmbedder())
    vv = again.vectors_for(name)
    assert vv is not None and not vv.rows_from_file and vv.fraction_complete < 1.0


def test_the_vector_file_checksum_is_sha256_of_its_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Hashed from a map of the file (or read, where it cannot be mapped): the same digest."""
    import hashlib

    from core.index.vector_checksum import file_sha256 as _sha256

    for data in (b"", b"abc", bytes(range(256)) * 5000):
        path = tmp_path / "vectors.usearch"
        path.write_bytes(data)
        assert _sha256(path) == hashlib.sha256(data).hexdigest()


def test_every_notes_opening_is_embedded_before_any_second_passage(tmp_path: Path) -> None:
    """Note-level semantic search covers the whole vault first: one short vector per note (see
    `tests/core/index/test_note_vectors.py`), then every opening passage, then the rest."""
    import os

    class Recording(BagOfWordsEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def embed_documents(self, texts: list[str]) -> np.ndarray:
            self.seen.extend(texts)
            return super().embed_documents(texts)

    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(12):
        sections = "\n\n".join(f"## Part {k}\n\n" + f"marker-{i}-{k} " + "filler words " * 120 for k in range(3))
        note = vault / f"n{i:02}.md"
        note.write_text(f"# Note {i}\n\n{sections}\n")
        os.utime(note, ns=(1_000_000_000 * (1_000 + i), 1_000_000_000 * (1_000 + i)))  # n11 is the newest
    embedder = Recording()
    engine, name = make_engine(tmp_path / "home", vault, embedder)
    engine.sync([name])
    files = engine.index_for(name).files
    assert all(len(rec.chunks) >= 3 for rec in files.values())  # several passages a note
    openings = [f"marker-{i}-0" for i in range(11, -1, -1)]  # newest note first
    note_pass = embedder.seen[: len(files)]
    assert [next(m for m in openings if m in text) for text in note_pass] == openings
    opening_pass = embedder.seen[len(files) : 2 * len(files)]
    assert [next(m for m in openings if m in text) for text in opening_pass] == openings
    assert len(embedder.seen) == len(files) + sum(len(rec.chunks) for rec in files.values())  # then every passage
