"""MiniLM on onnxruntime: building the tokenizer and session, and one batch's inference.

Split from `core.providers.embedding.onnx_minilm`, which keeps the embedder (file
checks, lazy loading, scheduling batches over sessions and threads). Here is what
turns a list of texts into vectors: MiniLM's tokenizer limits, the session options
(telemetry off, threads, optimisation), length-aware batching and mean pooling.
onnxruntime and tokenizers are imported inside the functions, never at module
import, so importing the embedding package stays cheap.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.base.python_turns import python_turns
from core.providers.embedding.base import EmbedderUnavailable, l2_normalise

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MAX_TOKENS = 256


def load_tokenizer(path: Path) -> Tokenizer:
    """Open the WordPiece tokenizer with MiniLM's limits and dynamic padding.

    The shipped file pads every input to 128 tokens and truncates at 128;
    sentence-transformers reads 256 tokens and pads to the longest in a batch,
    so both settings are replaced here.
    """
    from tokenizers import Tokenizer

    return _limited(Tokenizer.from_file(str(path)))


def load_query_tokenizer(path: Path, text: str) -> Tokenizer | None:
    """A tokenizer giving `text` the ids `load_tokenizer(path)` gives it, made for it alone; None if
    only the full one will do (see `core.providers.embedding.query_tokenizer`)."""
    from core.providers.embedding.query_tokenizer import query_tokenizer

    made = query_tokenizer(path, text)
    return None if made is None else _limited(made)


def _limited(tokenizer: Tokenizer) -> Tokenizer:
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def load_session(path: Path, intra_op_threads: int, *, optimise: bool = True) -> Any:
    """Create the onnxruntime session, keeping onnxruntime's telemetry off.

    `optimise=False` skips onnxruntime's graph optimisation: a session that starts in
    ~0.05 s instead of ~0.22 s CPU and runs ~35 % slower, right for one query, wrong for
    embedding a vault.

    onnxruntime writes `~/.cache/Microsoft/DeveloperTools/.onnxruntime/` and
    queues telemetry when it is imported, unless `ORT_DISABLE_TELEMETRY` is set
    first; an offline notes app must not do either. `setdefault` leaves an
    explicit user choice alone.
    """
    ort = _onnxruntime()
    options = _options(ort, intra_op_threads, optimise=optimise)
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise EmbedderUnavailable(
            "model_checksum",
            f"The built-in embedding model could not be loaded from {path}: {exc}",
        ) from exc


def prepared_session(
    path: Path, model_sha256: str, directory: Path, intra_op_threads: int, check_model: Callable[[], None]
) -> Any | None:
    """A session on a copy of the model that onnxruntime has already optimised, kept in `directory`.

    Optimising the int8 model at load time turns its weights into float32 (~90 MB) and costs
    ~0.2-0.4 s and a passing ~210 MiB on every start. Saved once (float32 weights in a file
    beside the graph) and loaded as is, a session starts in ~0.04 s and its load peaks ~20 MiB
    above the process instead of ~210. The copy is the fully optimised graph with its weights
    already packed for this CPU's matrix kernels (`session.save_external_prepacked_constant_
    initializers`): packing them at every load cost ~0.04 s more (0.07-0.09 s a session), and
    loaded from the file they are mapped pages of it (~35 MiB less of the heap after a query).
    The vectors are bit for bit those of the model itself, checked when the copy is made
    (`_same_answers`); a copy that differs is not kept. Keyed by the model's sha256, the
    onnxruntime version and this CPU's instruction sets (packed weights and fused kernels are
    made for them). `check_model` runs before the copy is made from the model (it raises on a
    damaged model). None if it cannot be made or loaded: the caller uses the model itself.
    """
    ort = _onnxruntime()
    folder = directory / f"minilm-{model_sha256[:16]}-ort{ort.__version__}-{_cpu_key()}-v{PREPARED_FORMAT}"
    graph = folder / "model.onnx"
    try:
        if not graph.is_file() or not (folder / PREPARED_WEIGHTS).is_file():
            check_model()
            _prepare(ort, path, folder, intra_op_threads)
        return ort.InferenceSession(str(graph), sess_options=_options(ort, intra_op_threads), providers=["CPUExecutionProvider"])
    except EmbedderUnavailable:
        raise  # a damaged model: no copy is made, and the model itself cannot be used either
    except Exception:  # noqa: BLE001 - onnxruntime raises its own untyped errors; the model itself still works
        logging.getLogger(__name__).warning("pre-optimised model in %s unusable; loading the model itself", folder, exc_info=True)
        shutil.rmtree(folder, ignore_errors=True)  # made again on the next start
        return None


PREPARED_FORMAT = 2
PREPARED_WEIGHTS = "weights.bin"
# MiniLM's own ids for "[CLS] the notes were written on monday [SEP]": what a prepared copy must answer as the model does.
_PROBE_IDS = (101, 1996, 3964, 2020, 2517, 2006, 6928, 102)


def _cpu_key() -> str:
    """A short name for this CPU's instruction sets (as numpy detected them), or just its architecture."""
    import platform

    features = getattr(getattr(getattr(np, "_core", None), "_multiarray_umath", None), "__cpu_features__", None)
    found = sorted(k for k, v in features.items() if v) if isinstance(features, dict) else []
    text = f"{platform.machine()}:{','.join(found)}"
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _same_answers(ort: Any, made: Any, copy: Path, intra_op_threads: int) -> bool:
    """Whether a session on the copy gives exactly what `made` (a session on the model itself) gives."""
    ids = np.array([_PROBE_IDS], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    loaded = ort.InferenceSession(str(copy), sess_options=_options(ort, intra_op_threads), providers=["CPUExecutionProvider"])
    return bool(np.array_equal(made.run(None, feed)[0], loaded.run(None, feed)[0]))


def _prepare(ort: Any, path: Path, folder: Path, intra_op_threads: int) -> None:
    """Write the optimised graph and its weights to a private folder, then move it into place whole."""
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        made = _save_copy(ort, path, tmp, intra_op_threads, packed=True)
        if not _same_answers(ort, made, tmp / "model.onnx", intra_op_threads):
            # Not seen on any machine here; if it happens, the copy round 4 kept (the basic
            # optimisations, packed at each load) rather than optimising the model at every start.
            logging.getLogger(__name__).warning("packed copy of the model answers differently; keeping an unpacked one")
            for written in tmp.iterdir():
                written.unlink()
            _save_copy(ort, path, tmp, intra_op_threads, packed=False)
        try:
            tmp.replace(folder)
        except OSError:  # another process put its copy in place first: keep that one
            if not (folder / "model.onnx").is_file():
                raise
        for old in folder.parent.glob("minilm-*"):  # copies for another onnxruntime: 90 MB each, never read again
            if old != folder and old.is_dir() and ".tmp-" not in old.name:
                shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _save_copy(ort: Any, path: Path, into: Path, intra_op_threads: int, *, packed: bool) -> Any:
    """Optimise the model into `into` (graph and weights file); returns the session that made it."""
    options = _options(ort, intra_op_threads)
    if not packed:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(into / "model.onnx")
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", PREPARED_WEIGHTS)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    options.add_session_config_entry("session.save_external_prepacked_constant_initializers", "1" if packed else "0")
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _onnxruntime() -> Any:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    import onnxruntime as ort

    return ort


def _options(ort: Any, intra_op_threads: int, *, optimise: bool = True) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    level = ort.GraphOptimizationLevel
    options.graph_optimization_level = level.ORT_ENABLE_ALL if optimise else level.ORT_DISABLE_ALL
    # onnxruntime's default: its threads spin briefly between operators. Turning that off
    # cost ~12 % throughput and did not help the window: the stalls blamed on it were a
    # full GC pass and GIL convoys (see desktop/app.py, core/index/manifest.py); with spinning
    # the UI's largest gap while embedding 10k notes measured 20-21 ms (bench_ui.py).
    options.log_severity_level = 3  # errors only: warnings here are not actionable
    return options


def release_free_heap() -> None:
    """Hand memory the C heap holds but no longer uses back to the OS (glibc only; elsewhere a no-op).

    Creating the optimised session dequantises the int8 weights and frees its scratch
    afterwards, but glibc keeps the freed pages: measured with 10k notes open, RSS after
    the model loaded was 345 MiB, 281 MiB after `malloc_trim(0)` (64 MiB that nothing used),
    and trimming before the load lowered the peak during it from 377 to 371 MiB. A
    few milliseconds, done only when a long-lived session is made or let go.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        pass


def length_batches(order: list[int], texts: list[str], size: int, budget_chars: int) -> list[list[int]]:
    """Batches of similar length whose padded size stays small.

    With this model file, padding is pure cost and batching long texts buys
    nothing (measured: ~210-token chunks embed as fast one by one as in eights),
    while short texts do gain from batches. So a batch holds up to `size` texts
    only while `count × longest` stays within `budget_chars`.
    """
    out: list[list[int]] = []
    group: list[int] = []
    for i in order:  # ascending length, so the newest text is the longest of its group
        if group and (len(group) >= size or (len(group) + 1) * len(texts[i]) > budget_chars):
            out.append(group)
            group = []
        group.append(i)
    if group:
        out.append(group)
    return out


def run_batch(session: Any, tokenizer: Tokenizer, texts: list[str]) -> np.ndarray:
    """Tokenize, run the encoder, mean-pool over real tokens, normalise.

    The Python around the inference takes a turn (`core.base.python_turns`): a helper thread
    embedding beside a tool worker would otherwise be a second thread at Python, and two starve
    the UI thread of the GIL. The inference itself runs outside the GIL and outside the turn.
    """
    turns = python_turns()
    with turns.turn():
        encodings = tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        attention_mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        token_type_ids = np.array([e.type_ids for e in encodings], dtype=np.int64)
        with turns.released():
            (hidden,) = session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": attention_mask,
                    "token_type_ids": token_type_ids,
                },
            )
        return l2_normalise(mean_pool(hidden, attention_mask))


def mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Average token vectors, ignoring padding, as sentence-transformers does.

    Args:
        hidden: (batch, seq, dims) token embeddings.
        attention_mask: (batch, seq), 1 for real tokens, 0 for padding.

    Returns:
        (batch, dims) float32 sentence embeddings (not yet normalised).
    """
    mask = attention_mask[:, :, None].astype(np.float32)
    summed = (hidden.astype(np.float32) * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), np.float32(1e-9))
    return summed / counts
