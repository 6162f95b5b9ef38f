"""Text embedders: the offline built-in model and remote servers, behind one protocol.

Importing this package is cheap: onnxruntime and tokenizers load only when the
built-in model embeds its first text, and httpx (the remote embedders) only
when `OllamaEmbedder`/`OpenAIEmbedder` is first looked up here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.providers.embedding.base import (
    Embedder,
    EmbedderUnavailable,
    EmbeddingCancelled,
    ProgressCallback,
    UnavailableReason,
    l2_normalise,
)
from core.providers.embedding.minilm_files import MODEL_SHA256, TOKENIZER_SHA256
from core.providers.embedding.onnx_minilm import BUILTIN_MODEL_ID, MiniLMEmbedder
from core.providers.embedding.registry import (
    EmbeddingProviderInfo,
    create_embedder,
    default_registry,
)

if TYPE_CHECKING:
    from core.providers.embedding.remote import OllamaEmbedder, OpenAIEmbedder

__all__ = [
    "BUILTIN_MODEL_ID",
    "MODEL_SHA256",
    "TOKENIZER_SHA256",
    "Embedder",
    "EmbedderUnavailable",
    "EmbeddingCancelled",
    "EmbeddingProviderInfo",
    "MiniLMEmbedder",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "ProgressCallback",
    "UnavailableReason",
    "create_embedder",
    "default_registry",
    "l2_normalise",
]


def __getattr__(name: str) -> Any:
    """The remote embedders on first use: httpx costs ~250 ms of a cold `cairn search` that never needs it."""
    if name in ("OllamaEmbedder", "OpenAIEmbedder"):
        from core.providers.embedding import remote

        return getattr(remote, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
