"""The built-in MiniLM embedder, run on the real model file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core.providers.embedding import EmbedderUnavailable, EmbeddingCancelled, MiniLMEmbedder, minilm_files, onnx_minilm
from core.providers.embedding.base import Embedder

PROJECT_ROOT = Path(__file__).resolve().parents[4]

# Lengths vary a lot on purpose, so sorted batching really reorders them.
MIXED_TEXTS = [
    "A fairly long note about the garden: tomatoes, beans, and the compost heap by the shed.",
    "short",
    "Meeting notes: decided to move the release to Friday after the security review.",
    "",
    "Recipe",
    "The quick brown fox jumps over the lazy dog. " * 6,
    "tax return 2025",
    "How to rotate the SSH keys on the build server without downtime",
    "bread",
    "Notes on Kant's Critique of Pure Reason, chapter two: the transcendental aesthetic.",
    "x",
    "Grocery list: eggs, milk, flour, yeast, salt, olive oil, lemons",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_describes_the_model_for_index_manifests(embedder: MiniLMEmbedder) -> None:
    as_protocol: Embedder = embedder  # a type checker verifies the protocol here
    assert as_protocol is embedder
    assert embedder.dims == 384
    assert embedder.max_tokens == 256
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)"
    assert embedder.model_hash == minilm_files.MODEL_SHA256


def test_vectors_are_float32_unit_length_with_384_dims(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed_documents(MIXED_TEXTS)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(MIXED_TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_same_text_twice_gives_identical_vectors(embedder: MiniLMEmbedder) -> None:
    first = embedder.embed_query("Where did I put the notes on sourdough starters?")
    second = embedder.embed_query("Where did I put the notes on sourdough starters?")
    assert np.array_equal(first, second)


def test_paraphrase_is_closer_than_unrelated_text(embedder: MiniLMEmbedder) -> None:
    bake, loaf, stocks = embedder.embed_documents(
        [
            "How do I bake sourdough bread?",
            "Steps for making a sourdough loaf",
            "The central bank raised interest rates again.",
        ]
    )
    assert bake @ loaf > 0.6
    assert bake @ loaf > bake @ stocks + 0.3


def test_batched_result_matches_one_by_one_in_input_order(embedder: MiniLMEmbedder) -> None:
    batched = embedder.embed_documents(MIXED_TEXTS)
    singles = np.stack([embedder.embed_query(text) for text in MIXED_TEXTS])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


def test_embed_query_matches_embed_documents_row(embedder: MiniLMEmbedder) -> None:
    query = embedder.embed_query("sourdough")
    assert query.shape == (384,)
    np.testing.assert_allclose(query, embedder.embed_documents(["sourdough"])[0], atol=1e-6)


def test_text_longer_than_256_tokens_is_truncated_not_rejected(embedder: MiniLMEmbedder) -> None:
    long_text = "word " * 1000
    np.testing.assert_allclose(
        embedder.embed_query(long_text), embedder.embed_query("word " * 300), atol=1e-5
    )


def test_empty_input_gives_empty_array_without_loading() -> None:
    fresh = MiniLMEmbedder(model_path="/nonexistent/model.onnx")
    result = fresh.embed_documents([])
    assert result.shape == (0, 384) and result.dtype == np.float32


def test_progress_is_reported_after_each_batch_of_eight(embedder: MiniLMEmbedder) -> None:
    calls: list[tuple[int, int]] = []
    embedder.embed_documents(
        ["note"] * 20, progress=lambda done, total: calls.append((done, total))
    )
    assert calls == [(8, 20), (16, 20), (20, 20)]


def test_cancel_set_between_batches_raises_embedding_cancelled(embedder: MiniLMEmbedder) -> None:
    cancel = threading.Event()
    calls: list[int] = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        cancel.set()

    with pytest.raises(EmbeddingCancelled):
        embedder.embed_documents(["note"] * 20, progress=progress, cancel=cancel)
    assert calls == [8]


def test_cancel_already_set_embeds_nothing(embedder: MiniLMEmbedder) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(EmbeddingCancelled):
        embedder.embed_documents(["note"], progress=lambda d, t: pytest.fail("ran"), cancel=cancel)


def _damaged_model(tmp_path: Path) -> Path:
    """A copy of the bundled model with one byte flipped a megabyte in."""
    damaged = tmp_path / "model.onnx"
    shutil.copyfile(minilm_files.default_model_path(), damaged)
    with damaged.open("r+b") as fh:
        fh.seek(1_000_000)
        byte = fh.read(1)
        fh.seek(1_000_000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    return damaged


def test_model_with_one_changed_byte_is_rejected_as_checksum_error(tmp_path: Path) -> None:
    damaged = _damaged_model(tmp_path)
    with pytest.raises(EmbedderUnavailable) as info:
        MiniLMEmbedder(model_path=damaged).embed_query("hello")
    assert info.value.reason == "model_checksum"
    assert str(damaged) in info.value.message


def test_truncated_model_is_rejected_as_checksum_error(tmp_path: Path) -> None:
    short = tmp_path / "model.onnx"
    short.write_bytes(minilm_files.default_model_path().read_bytes()[:1000])
    with pytest.raises(EmbedderUnavailable) as info:
        MiniLMEmbedder(model_path=short).verify()
    assert info.value.reason == "model_checksum"


def test_missing_model_file_is_reported_as_model_missing(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable) as info:
        MiniLMEmbedder(model_path=tmp_path / "gone.onnx").embed_query("hello")
    assert info.value.reason == "model_missing"
    assert "gone.onnx" in info.value.message


def test_edited_tokenizer_is_rejected_as_checksum_error(tmp_path: Path) -> None:
    edited = tmp_path / "tokenizer.json"
    data = json.loads(minilm_files.default_tokenizer_path().read_text(encoding="utf-8"))
    data["truncation"] = None
    edited.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(EmbedderUnavailable) as info:
        MiniLMEmbedder(tokenizer_path=edited).verify()
    assert info.value.reason == "model_checksum"


def test_checksums_are_computed_once_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokenizer = tmp_path / "tokenizer.json"
    shutil.copyfile(minilm_files.default_tokenizer_path(), tokenizer)
    hashed: list[str] = []

    real_hash = minilm_files.sha256_file

    def counting_hash(path: Path) -> str:
        hashed.append(path.name)
        return real_hash(path)

    monkeypatch.setattr(minilm_files, "sha256_file", counting_hash)
    fresh = MiniLMEmbedder(tokenizer_path=tokenizer)
    fresh.verify()
    fresh.verify()
    assert sorted(hashed) == ["model.onnx", "tokenizer.json"]

    stat = tokenizer.stat()
    os.utime(tokenizer, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    fresh.verify()
    assert sorted(hashed) == ["model.onnx", "tokenizer.json", "tokenizer.json"]


def test_import_is_lazy_and_onnxruntime_writes_nothing_to_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    script = textwrap.dedent(
        """
        import sys
        import core.providers.embedding.onnx_minilm as m
        assert "onnxruntime" not in sys.modules, "onnxruntime imported eagerly"
        assert "tokenizers" not in sys.modules, "tokenizers imported eagerly"
        vector = m.MiniLMEmbedder().embed_query("hello telemetry")
        assert "onnxruntime" in sys.modules and vector.shape == (384,)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert written == [], f"files written under HOME: {written}"


def test_two_sessions_side_by_side_match_one_session_in_input_order(embedder: MiniLMEmbedder) -> None:
    texts = [f"{t} ({i})" for i, t in enumerate(MIXED_TEXTS * 5)]  # 60 texts: enough batches to share
    single = MiniLMEmbedder(sessions=1).embed_documents(texts)
    calls: list[tuple[int, int, str]] = []
    shared = embedder.embed_documents(texts, progress=lambda d, t: calls.append((d, t, threading.current_thread().name)))
    np.testing.assert_allclose(shared, single, atol=1e-5)
    assert len(embedder._extra) == 1  # the second session was really used
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls) and calls[-1][:2] == (60, 60)
    assert {name for _, _, name in calls} == {threading.current_thread().name}  # never from a helper thread


def test_cancel_stops_both_sessions(embedder: MiniLMEmbedder) -> None:
    cancel = threading.Event()
    calls: list[int] = []

    def progress(done: int, total: int) -> None:
        calls.append(done)
        cancel.set()

    with pytest.raises(EmbeddingCancelled):
        embedder.embed_documents([f"note {i}" for i in range(80)], progress=progress, cancel=cancel)
    assert len(calls) == 1 and calls[0] < 80


def test_trim_lets_the_extra_session_go_and_the_next_bulk_embed_reloads_it() -> None:
    emb = MiniLMEmbedder()
    texts = [f"note number {i}" for i in range(40)]
    first = emb.embed_documents(texts)
    assert len(emb._extra) == 1
    emb.trim()
    assert emb._extra == [] and emb.embed_query("still works").shape == (384,)
    np.testing.assert_allclose(emb.embed_documents(texts), first, atol=1e-6)
    assert len(emb._extra) == 1


def test_a_query_before_any_document_runs_on_the_quick_session_with_the_same_vector() -> None:
    """A search-only process (`cairn search`) never pays for onnxruntime's graph optimisation."""
    emb = MiniLMEmbedder()
    onnx_minilm.quick_queries()
    try:
        quick = emb.embed_query("how do I rotate ssh keys")
    finally:
        onnx_minilm.quick_queries(False)
    assert emb._session is None and emb._quick is not None
    full = emb.embed_documents(["how do I rotate ssh keys"])[0]
    assert emb._quick is None  # the full session answers from now on; the quick one is let go
    assert float(quick @ full) > 0.99999
    np.testing.assert_allclose(quick, full, atol=1e-4)
    np.testing.assert_allclose(emb.embed_query("how do I rotate ssh keys"), full, atol=1e-6)


def test_a_long_lived_process_queries_on_the_full_session() -> None:
    """Without quick_queries (the app, the MCP server) the first query loads the optimised session."""
    emb = MiniLMEmbedder()
    emb.embed_query("sourdough")
    assert emb._session is not None and emb._quick is None


def test_a_prepared_copy_of_the_model_gives_the_same_vectors_and_is_made_once(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    """The engine keeps an already-optimised copy in its cache: same vectors, no optimising on the next start."""
    prepared = MiniLMEmbedder()
    prepared.prepare_in(tmp_path / "models")
    got = prepared.embed_documents(MIXED_TEXTS)
    want = embedder.embed_documents(MIXED_TEXTS)
    np.testing.assert_array_equal(got, want)  # bit for bit: the packed weights run the same kernels
    (folder,) = (tmp_path / "models").iterdir()
    weights = folder / "weights.bin"
    # float32 weights, outside the graph, and beside them the same weights packed for this CPU
    assert (folder / "model.onnx").is_file() and weights.stat().st_size > 120_000_000
    stamp = weights.stat().st_mtime_ns
    again = MiniLMEmbedder()
    again.prepare_in(tmp_path / "models")
    onnx_minilm.quick_queries()
    try:
        np.testing.assert_array_equal(again.embed_query(MIXED_TEXTS[0]), want[0])  # what `cairn search` runs
    finally:
        onnx_minilm.quick_queries(False)
    assert weights.stat().st_mtime_ns == stamp  # loaded, not made again


def test_a_packed_copy_that_answers_differently_is_not_kept(
    tmp_path: Path, embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy made instead packs nothing (the basic optimisations only): made once, and its vectors are the model's."""
    from core.providers.embedding import minilm_session

    monkeypatch.setattr(minilm_session, "_same_answers", lambda *args: False)
    prepared = MiniLMEmbedder()
    prepared.prepare_in(tmp_path / "models")
    got = prepared.embed_documents(MIXED_TEXTS)
    (folder,) = (tmp_path / "models").iterdir()
    assert 50_000_000 < (folder / "weights.bin").stat().st_size < 100_000_000
    assert float(np.min(np.sum(got * embedder.embed_documents(MIXED_TEXTS), axis=1))) > 0.99999


def test_a_damaged_prepared_copy_falls_back_to_the_model_and_is_made_again(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    first = MiniLMEmbedder()
    first.prepare_in(tmp_path / "models")
    first.load()
    (folder,) = (tmp_path / "models").iterdir()
    with (folder / "weights.bin").open("r+b") as fh:
        fh.truncate(1000)
    damaged = MiniLMEmbedder()
    damaged.prepare_in(tmp_path / "models")
    np.testing.assert_allclose(damaged.embed_query("bread"), embedder.embed_query("bread"), atol=1e-5)
    assert not folder.exists()  # set aside: the next start makes it again


def test_a_damaged_model_is_rejected_before_any_copy_is_made_of_it(tmp_path: Path) -> None:
    damaged = _damaged_model(tmp_path)
    emb = MiniLMEmbedder(model_path=damaged)
    emb.prepare_in(tmp_path / "models")
    with pytest.raises(EmbedderUnavailable) as info:
        emb.embed_documents(["hello"])
    assert info.value.reason == "model_checksum"
    assert not any((tmp_path / "models").glob("*/weights.bin"))


def test_making_a_prepared_copy_removes_copies_made_for_another_onnxruntime(tmp_path: Path) -> None:
    stale = tmp_path / "models" / "minilm-0000000000000000-ort0.0.1-v1"
    stale.mkdir(parents=True)
    (stale / "weights.bin").write_bytes(b"old")
    emb = MiniLMEmbedder()
    emb.prepare_in(tmp_path / "models")
    emb.load()
    assert not stale.exists()
    assert len(list((tmp_path / "models").iterdir())) == 1  # only this onnxruntime's copy


def test_side_by_side_inside_a_python_turn_lets_the_helper_take_turns(embedder: MiniLMEmbedder) -> None:
    """An agents-server worker holds the turn while Ask embeds its sentences on two sessions: the helper
    thread's Python takes turns with it (no second thread at Python beside the UI thread), and the
    worker gives the turn up while it waits for the helper (else the helper's last batch would wait
    out the turn's patience)."""
    from core.base.python_turns import python_turns

    turns = python_turns()
    texts = [f"{t} ({i})" for i, t in enumerate(MIXED_TEXTS * 5)]
    expected = MiniLMEmbedder(sessions=1).embed_documents(texts)
    patience, impatient, taken = turns.patience, turns.stats.impatient, turns.stats.taken
    turns.patience = 3.0
    try:
        started = time.monotonic()
        with turns.turn():
            got = embedder.embed_documents(texts)
        elapsed = time.monotonic() - started
    finally:
        turns.patience = patience
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert len(embedder._extra) == 1  # both sessions ran
    assert turns.stats.impatient == impatient and elapsed < 3.0
    assert turns.stats.taken > taken + 1  # the helper took turns of its own
