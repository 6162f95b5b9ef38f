"""The provider registry the settings dialog and the CLI build embedders from."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from core.providers.embedding import (
    EmbeddingProviderInfo,
    MiniLMEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    create_embedder,
    default_registry,
)
from core.providers.embedding.base import Embedder, ProgressCallback


class ConstantEmbedder:
    """A provider a test registers: every text maps to the same unit vector."""

    model_id = "constant"
    model_hash = "constant:1"
    dims = 3
    max_tokens = 10

    def __init__(self, model: str | None) -> None:
        self.model = model

    def embed_documents(
        self,
        texts: Sequence[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def test_default_registry_lists_builtin_multilingual_ollama_and_openai() -> None:
    registry = default_registry()
    assert list(registry) == ["builtin", "multilingual", "ollama", "openai"]
    assert not registry["builtin"].remote and not registry["builtin"].needs_key
    assert registry["ollama"].remote and not registry["ollama"].needs_key
    assert registry["openai"].needs_key and registry["openai"].key_env_var == "OPENAI_API_KEY"


def test_each_call_builds_a_fresh_registry() -> None:
    first = default_registry()
    first.pop("openai")
    assert "openai" in default_registry()


def test_provider_info_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        default_registry()["builtin"].label = "changed"  # type: ignore[misc]


def test_builtin_provider_builds_minilm_without_loading_it() -> None:
    embedder = create_embedder("builtin", intra_op_threads=1)
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.dims == 384


def test_builtin_provider_rejects_another_model_name() -> None:
    with pytest.raises(ValueError, match="builtin-minilm"):
        create_embedder("builtin", model="bge-large")


def test_remote_providers_use_defaults_and_overrides() -> None:
    ollama = create_embedder("ollama")
    assert isinstance(ollama, OllamaEmbedder)
    assert ollama.endpoint == "http://127.0.0.1:11434/api/embed"
    openai = create_embedder(
        "openai", model="m", base_url="http://127.0.0.1:8080", api_key="k", timeout=5.0
    )
    assert isinstance(openai, OpenAIEmbedder)
    assert openai.endpoint == "http://127.0.0.1:8080/v1/embeddings"
    assert openai.model_hash == "openai:http://127.0.0.1:8080:m"


def test_unknown_provider_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="builtin, multilingual, ollama, openai"):
        create_embedder("cohere")


def test_a_test_can_register_its_own_provider() -> None:
    def factory(
        *, model: str | None, base_url: str | None, api_key: str | None, **_: Any
    ) -> Embedder:
        return ConstantEmbedder(model)

    registry = {
        "const": EmbeddingProviderInfo(
            id="const", label="Constant", needs_key=False, key_env_var=None, remote=False,
            factory=factory, default_model="c1",
        )
    }
    embedder = create_embedder("const", registry=registry)
    assert isinstance(embedder, ConstantEmbedder) and embedder.model == "c1"
    assert embedder.embed_query("anything").shape == (3,)
