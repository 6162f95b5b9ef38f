"""A sync's end: the parallel build's worker is killed before the saves, torn down beside them, reaped after them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import core.index.indexer
import core.index.manifest
import core.index.parallel_build as pb
from core.base.config import EngineConfig, VaultConfig
from core.base.paths import AppPaths
from core.index.indexer import VaultIndex


class SlowClosingBuild:
    """A build that hands every note back to this process and takes a while to close (a worker being reaped)."""

    killed_at: float | None = None

    answered_notes = 0  # the worker's notes answered (none: it hands every note back)
    waiting = True  # no claim left for this process after the one it yields

    def __init__(self, notes: list[Any], fail: bool = False) -> None:
        self.notes = notes
        self.fail = fail
        self.closing = threading.Event()
        self.closed = threading.Event()

    def __iter__(self) -> Iterator[list[Any]]:
        yield list(self.notes)

    def kill(self) -> None:
        if self.killed_at is None:
            self.killed_at = time.monotonic()

    def close(self) -> None:
        self.closing.set()
        time.sleep(0.2)
        self.closed.set()
        if self.fail:
            raise OSError("scratch folder busy")


def _index(tmp_path: Path, notes: int = 5) -> VaultIndex:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(notes):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nBody {i}.\n")
    vault = VaultConfig("v", str(root))
    return VaultIndex(vault, AppPaths(tmp_path / "home"), EngineConfig(vaults=(vault,)))


def _with_build(monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> list[SlowClosingBuild]:
    builds: list[SlowClosingBuild] = []

    def start(vault: str, notes: list[Any], *args: Any) -> SlowClosingBuild:
        builds.append(SlowClosingBuild(notes, fail))
        return builds[-1]

    monkeypatch.setattr(pb.ParallelBuild, "start", staticmethod(start))
    return builds


def test_the_worker_is_killed_before_the_saves_and_reaped_after_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No thread: the kill is at once (the system tears the worker down on the other core meanwhile),
    the scratch folder and the reaping wait until the manifest and link graph are saved, and the sync
    returns only once the build is closed."""
    builds = _with_build(monkeypatch)
    index = _index(tmp_path)
    seen: list[tuple[bool, bool]] = []
    real_save = core.index.indexer.save_manifest

    def save(*args: Any) -> None:
        seen.append((builds[0].killed_at is not None, builds[0].closing.is_set()))
        real_save(*args)

    monkeypatch.setattr(core.index.indexer, "save_manifest", save)
    threads = threading.active_count()
    stats = index.sync()
    assert stats.documents == 5
    assert seen == [(True, False)]  # saved after the kill, before the close
    assert builds[0].closed.is_set()  # and the sync returned only once it had closed
    assert threading.active_count() == threads
    assert core.index.manifest.load_manifest(index.manifest_path) is not None


def test_a_build_that_fails_to_close_fails_the_sync_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_build(monkeypatch, fail=True)
    index = _index(tmp_path)
    with pytest.raises(OSError, match="scratch folder busy"):
        index.sync()
