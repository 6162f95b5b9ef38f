"""Small real pieces the tests share: a deterministic bag-of-words embedder."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

WORD = re.compile(r"\w+", re.UNICODE)


class BagOfWordsEmbedder:
    """Hashes words into 64 dims: fast, deterministic, and similar texts land close."""

    model_id = "test/bag-of-words"
    dims = 64
    max_tokens = 512

    def __init__(self, model_hash: str = "bow-v1") -> None:
        self.model_hash = model_hash
        self.calls = 0
        self.texts_embedded = 0

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dims, dtype=np.float32)
        for w in WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=4).digest(), "little")
            v[h % self.dims] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_documents(
        self,
        texts: Sequence[str],
        progress: Callable[[int, int], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dims), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


class ScriptedProvider:
    """A chat provider that replays a fixed answer and records what it was sent."""

    id = "scripted"
    model = "scripted-1"

    def __init__(self, deltas: Sequence[str], *, remote: bool = True, fail_with: Exception | None = None) -> None:
        self.deltas = list(deltas)
        self.remote = remote
        self.fail_with = fail_with
        self.calls: list[list[object]] = []

    def stream(self, messages, *, temperature: float = 0.2, max_tokens: int | None = None, cancel=None):  # type: ignore[no-untyped-def]
        self.calls.append(list(messages))
        for d in self.deltas:
            if cancel is not None and cancel.is_set():
                break
            yield d
        if self.fail_with is not None:
            raise self.fail_with


LINK_VAULT_NAME = "link_vault"


def copy_link_vault(tmp_path: Path) -> Path:
    """A fresh copy of tests/fixtures/link_vault (every link form), so tests may edit it."""
    import shutil

    root = tmp_path / LINK_VAULT_NAME
    shutil.copytree(Path(__file__).resolve().parent / "fixtures" / LINK_VAULT_NAME, root)
    return root


STRUCTURED_FIXTURE = Path(__file__).resolve().parent / "fixtures" / "structured_vault"


def structured_engine(tmp_path_factory: Any) -> tuple[Any, Path]:
    """A keyword-indexed engine over a copy of the structured fixture vault (properties, tasks, a .base)."""
    import shutil

    from core.base.paths import AppPaths
    from core.engine import Engine

    root = tmp_path_factory.mktemp("v") / "structured"
    shutil.copytree(STRUCTURED_FIXTURE, root)
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=None)
    eng.add_vault(root, name="structured")
    eng.sync(embed=False)
    return eng, root


def bag_of_words_engine(tmp_path_factory: Any, notes: dict[str, str]) -> Any:
    """An engine over vault `v` made of `notes` (relative path -> text), keyword and bag-of-words vectors."""
    from core.base.paths import AppPaths
    from core.engine import Engine

    vault = tmp_path_factory.mktemp("vault")
    for name, text in notes.items():
        path = vault / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=lambda _vc: BagOfWordsEmbedder())
    eng.add_vault(vault, name="v")
    eng.sync(["v"])
    return eng
