"""A first index parsed by a worker process is the index parsed in-process, skips and all."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import core.index.prefetch as prefetch
from core.base.config import EngineConfig, VaultConfig
from core.base.paths import AppPaths
from core.index.indexer import VaultIndex
from tests.index_dump import index_dump

TIL = next((p / "shared/data/vaults/simonw-til" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults").is_dir()), Path("/none"))

pytestmark = pytest.mark.skipif(not TIL.is_dir(), reason="needs the simonw-til vault")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vault")
    for src in sorted(TIL.rglob("*.md"))[:60]:
        dest = root / src.relative_to(TIL)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    (root / "binary.md").write_bytes(b"# looks like a note\x00\x01\x02")
    (root / "big.md").write_bytes(b"x" * 300_000)
    return root


def _index(vault: Path, home: Path, monkeypatch: pytest.MonkeyPatch, *, worker: bool) -> tuple[VaultIndex, Any]:
    monkeypatch.setattr(prefetch, "MIN_NOTES", 1 if worker else 10**9)
    monkeypatch.setattr(prefetch, "spare_core", lambda: True)  # whatever else runs on this machine
    started: list[Any] = []
    real_start = prefetch.Prefetch.start.__func__  # type: ignore[attr-defined]

    def spy(cls: Any, *args: Any, **kwargs: Any) -> Any:
        got = real_start(cls, *args, **kwargs)
        started.append(got)
        return got

    monkeypatch.setattr(prefetch.Prefetch, "start", classmethod(spy))
    cfg = EngineConfig(vaults=(VaultConfig(name="v", root=str(vault)),), max_file_bytes=200_000)
    index = VaultIndex(cfg.vaults[0], AppPaths(home), cfg)
    stats = index.sync()
    assert (started[0] is not None) == worker
    return index, stats


def _postings(index: VaultIndex) -> dict[str, Any]:
    return index_dump(index.keyword._ix)


def test_a_worker_parsed_index_equals_the_in_process_one(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, plain_stats = _index(vault, tmp_path / "a", monkeypatch, worker=False)
    fast, fast_stats = _index(vault, tmp_path / "b", monkeypatch, worker=True)
    assert plain_stats.documents == fast_stats.documents == 60
    assert plain_stats.skipped == fast_stats.skipped == {"binary": 1, "too_large": 1}
    assert plain.files == fast.files
    assert _postings(plain) == _postings(fast)
    assert fast.keyword.doc_count() == sum(len(r.chunks) for r in fast.files.values())


def test_a_cancelled_sync_stops_the_worker(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefetch, "MIN_NOTES", 1)
    monkeypatch.setattr(prefetch, "spare_core", lambda: True)
    cfg = EngineConfig(vaults=(VaultConfig(name="v", root=str(vault)),))
    index = VaultIndex(cfg.vaults[0], AppPaths(tmp_path), cfg)
    cancel = threading.Event()
    closed: list[bool] = []
    real_close = prefetch.Prefetch.close

    def close(self: Any) -> None:
        real_close(self)
        closed.append(not any(p.is_alive() for p in self._pool._pool))

    monkeypatch.setattr(prefetch.Prefetch, "close", close)
    stats = index.sync(progress=lambda done, total, phase: cancel.set() if done >= 25 else None, cancel=cancel)
    assert stats.cancelled
    assert 0 < stats.documents < 60
    assert closed == [True]


def test_no_worker_without_a_spare_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefetch.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(prefetch.os, "getloadavg", lambda: (1.5, 1.0, 1.0), raising=False)
    assert not prefetch.spare_core()
    monkeypatch.setattr(prefetch.os, "getloadavg", lambda: (0.4, 1.0, 1.0), raising=False)
    assert prefetch.spare_core()
    monkeypatch.setattr(prefetch.os, "cpu_count", lambda: 1)
    assert not prefetch.spare_core()
