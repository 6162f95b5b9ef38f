"""The vault's own words in the embedding space: what closes a vocabulary gap offline.

A user asks to "write a remark that is ignored"; the vault says "comment". The
keyword side cannot know they are alike, but the embedding model does: each of
the vault's distinctive words is embedded once (with the vault's own model), and
at query time the words nearest to the query's vector are searched beside the
typed ones ("also searched: comment"). Only words that can help are kept: words of
three letters or more held by at least MIN_CHUNKS chunks but not by more than
MAX_SHARE of them (everyday words add nothing), the MAX_WORDS most frequent of
them, so the cost is bounded (a few thousand one-word embeddings, once per vault).

Stored beside the vault's index as `vocab_vectors.npz` (words, float16 vectors,
the model id); a rebuild re-embeds only the words it has not seen.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.base.stamp_cache import StampCache

FILE_NAME = "vocab_vectors.npz"
MAX_WORDS = 3000
MIN_CHUNKS = 2
MAX_SHARE = 0.05  # a word in more than this share of the chunks is too common to close a gap
BATCH = 64
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)  # letters only: the index splits compounds and code names


@dataclass(frozen=True)
class VocabVectors:
    """Words of a vault and their unit vectors (one row per word), for one embedding model."""

    model_id: str
    words: tuple[str, ...]
    matrix: np.ndarray  # (len(words), dims), float32, rows L2-normalised

    def nearest(self, query: np.ndarray, k: int, floor: float) -> list[tuple[str, float]]:
        """The `k` words nearest to the (unit) query vector with a cosine of at least `floor`, nearest first."""
        if not self.words or k <= 0:
            return []
        sims = self.matrix @ np.asarray(query, dtype=np.float32).reshape(-1)
        top = np.argsort(-sims)[: k * 4]
        return [(self.words[i], float(sims[i])) for i in top if sims[i] >= floor][:k]


def distinctive_words(texts: Iterable[str], max_words: int = MAX_WORDS) -> list[str]:
    """The vault's words worth embedding: in MIN_CHUNKS+ chunks, at most MAX_SHARE of them; most frequent first."""
    df: Counter[str] = Counter()
    chunks = 0
    for text in texts:
        chunks += 1
        df.update({w.lower() for w in _WORD.findall(text)})
    ceiling = max(MIN_CHUNKS, int(MAX_SHARE * chunks))
    kept = [w for w, n in df.items() if MIN_CHUNKS <= n <= ceiling]
    kept.sort(key=lambda w: (-df[w], w))
    return kept[:max_words]


def build(
    words: Sequence[str],
    embed: Callable[[list[str]], np.ndarray],
    model_id: str,
    previous: VocabVectors | None = None,
    cancel: threading.Event | None = None,
) -> VocabVectors | None:
    """Vectors for `words`, re-using `previous` rows of the same model; None if cancelled."""
    known: dict[str, np.ndarray] = {}
    if previous is not None and previous.model_id == model_id:
        known = {w: previous.matrix[i] for i, w in enumerate(previous.words)}
    missing = [w for w in words if w not in known]
    for start in range(0, len(missing), BATCH):
        if cancel is not None and cancel.is_set():
            return None
        batch = missing[start : start + BATCH]
        vecs = np.asarray(embed(batch), dtype=np.float32)
        known.update(zip(batch, vecs, strict=True))
    if not words:
        return VocabVectors(model_id, (), np.zeros((0, 0), dtype=np.float32))
    matrix = np.stack([known[w] for w in words]).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return VocabVectors(model_id, tuple(words), matrix)


def save(vectors: VocabVectors, folder: Path) -> None:
    """Write atomically beside the vault's index (a temp file, then a rename)."""
    tmp = folder / (FILE_NAME + ".tmp.npz")
    words = np.array(vectors.words, dtype=np.str_)  # a fixed-width text array: read back without pickle
    np.savez(tmp, words=words, matrix=vectors.matrix.astype(np.float16), model=np.array(vectors.model_id, dtype=np.str_))
    tmp.replace(folder / FILE_NAME)


def load(folder: Path) -> VocabVectors | None:
    """The stored vectors, or None when there are none (or the file is unreadable: it is rebuilt)."""
    path = folder / FILE_NAME
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            words = tuple(str(w) for w in data["words"])
            matrix = data["matrix"].astype(np.float32)
            model = str(data["model"])
    except (OSError, ValueError, KeyError):
        return None
    return VocabVectors(model, words, matrix)


_cache: StampCache[VocabVectors] = StampCache(FILE_NAME, load)


def cached(folder: Path) -> VocabVectors | None:
    """`load(folder)`, read again only when the file changed (searches call this every time)."""
    return _cache.get(folder)


def refresh(
    folder: Path, texts: Iterable[str], embed: Callable[[list[str]], np.ndarray], model_id: str, cancel: threading.Event | None = None
) -> bool:
    """Bring the stored vectors in step with the vault's words (only new words are embedded); True if written."""
    words = distinctive_words(texts)
    previous = load(folder)
    if previous is not None and previous.model_id == model_id and previous.words == tuple(words):
        return False
    built = build(words, embed, model_id, previous, cancel)
    if built is None:
        return False
    save(built, folder)
    return True
