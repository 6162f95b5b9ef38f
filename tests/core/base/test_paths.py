"""The folders `AppPaths.ensure` makes: only those every run uses, the index folder owner-only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

from core.base.paths import AppPaths
from core.index.embed_cache import EmbeddingCache


def test_ensure_makes_the_private_index_folder_and_no_cache_folder(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "home")
    paths.ensure()
    assert paths.indexes_dir.is_dir() and not paths.cache_dir.exists()  # a keyword-only index never uses the cache
    if os.name != "nt":
        assert stat.S_IMODE(paths.indexes_dir.stat().st_mode) == 0o700
        paths.indexes_dir.chmod(0o755)  # made by an older version: made private again
        paths.ensure()
        assert stat.S_IMODE(paths.indexes_dir.stat().st_mode) == 0o700


def test_the_cache_folder_is_made_by_its_first_writer(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "home")
    paths.ensure()
    cache = EmbeddingCache(paths.cache_dir / "embeddings", "model-hash", 4)
    cache.put("a" * 64, np.ones(4, dtype=np.float32))
    cache.flush()
    assert (paths.cache_dir / "embeddings").is_dir()
