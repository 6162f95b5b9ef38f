"""Text embedders: the offline built-in model and remote servers, behind one protocol.

Importing this package is cheap: onnxruntime and tokenizers load only when the
built-in model embeds its first text.
"""

from __future__ import annotations

from core.providers.embedding.base import (
    Embedder,
    EmbedderUnavailable,
    EmbeddingCancelled,
    ProgressCallback,
    UnavailableReason,
    l2_normalise,
)
from core.providers.embedding.onnx_minilm import (
    BUILTIN_MODEL_ID,
    MODEL_SHA256,
    TOKENIZER_SHA256,
    MiniLMEmbedder,
)
from core.providers.embedding.registry import (
    EmbeddingProviderInfo,
    create_embedder,
    default_registry,
)
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
