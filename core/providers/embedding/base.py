"""What every embedder promises, and the errors it may raise.

The indexer, the search path and the settings dialog all talk to an
`Embedder`; none of them cares whether the vectors come from the bundled ONNX
model or from a server. Keeping the contract in one small module lets tests
register a fake provider without importing onnxruntime or httpx.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

import numpy as np

#: Called after each batch with (texts done, texts in total).
ProgressCallback = Callable[[int, int], None]

#: Why an embedder cannot run. The UI maps each code to advice the user can act on.
UnavailableReason = Literal[
    "model_missing",
    "model_checksum",
    "connection_refused",
    "unauthorized",
    "unknown_model",
    "http_error",
    "timeout",
]


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    Deliberately not `runtime_checkable`: on Python 3.11 `isinstance` reads
    every member with `hasattr`, and a remote embedder's `dims` may have to ask
    its server.

    Attributes:
        model_id: Human-readable model name, shown in the UI and stored in index
            manifests.
        model_hash: Identifies the exact weights: the sha256 of the model file
            for local models, `"{provider}:{base_url}:{model}"` for remote ones.
            An index built with a different hash must be rebuilt, because
            vectors from different models are not comparable.
        dims: Length of every vector.
        max_tokens: Longest input the model reads; longer inputs are truncated,
            so chunkers should stay under it.
    """

    # Read-only properties, so a plain class attribute or a computed property
    # (a remote embedder learns `dims` from the server) both satisfy the type.
    @property
    def model_id(self) -> str: ...

    @property
    def model_hash(self) -> str: ...

    @property
    def dims(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    def embed_documents(
        self,
        texts: Sequence[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        """Embed many texts, in order.

        Args:
            texts: The texts; may be empty.
            progress: Called after each batch with (done, total), so a worker
                can drive a progress bar.
            cancel: Checked between batches; when set, `EmbeddingCancelled` is
                raised and nothing is returned.

        Returns:
            float32 array of shape (len(texts), dims), rows L2-normalised.

        Raises:
            EmbedderUnavailable: The model or server cannot be used.
            EmbeddingCancelled: `cancel` was set.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query; float32, shape (dims,), unit length."""
        ...


class EmbedderUnavailable(Exception):
    """The embedder cannot produce vectors, for a reason the user can fix.

    Attributes:
        reason: Machine-readable code (see `UnavailableReason`), so the CLI can
            choose an exit code and the app a remedy without parsing text.
        message: A sentence for the user. Never contains an API key.
        model_hash: The failing embedder's `model_hash` when it says (a remote one does), so
            the engine knows which of its embedders to set aside.
    """

    def __init__(self, reason: UnavailableReason, message: str, model_hash: str | None = None) -> None:
        super().__init__(message)
        self.reason: UnavailableReason = reason
        self.message = message
        self.model_hash = model_hash

    def __repr__(self) -> str:
        return f"EmbedderUnavailable(reason={self.reason!r}, message={self.message!r})"


class EmbeddingCancelled(Exception):
    """Raised when the caller's cancel event was set between batches."""


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Scale each row to unit length, as float32.

    Cosine similarity then becomes a plain dot product for the vector index.
    All-zero rows stay zero instead of becoming NaN.

    Args:
        vectors: Array of shape (n, d).

    Returns:
        A new float32 array of the same shape.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, np.float32(1e-12))).astype(np.float32, copy=False)
