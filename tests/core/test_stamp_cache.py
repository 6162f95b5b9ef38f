"""A folder's file is read once, read again when it changes, and a missing file reads as None."""

from __future__ import annotations

import os
from pathlib import Path

from core.base.stamp_cache import StampCache


def test_read_once_again_after_a_change_and_none_when_missing(tmp_path: Path) -> None:
    reads: list[str] = []

    def load(folder: Path) -> str:
        reads.append(text := (folder / "v.txt").read_text())
        return text

    cache: StampCache[str] = StampCache("v.txt", load)
    assert cache.get(tmp_path) is None and reads == []
    (tmp_path / "v.txt").write_text("one")
    assert cache.get(tmp_path) == "one"
    assert cache.get(tmp_path) == "one"
    assert reads == ["one"]
    (tmp_path / "v.txt").write_text("two")
    stat = (tmp_path / "v.txt").stat()
    os.utime(tmp_path / "v.txt", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cache.get(tmp_path) == "two"
    assert reads == ["one", "two"]
    (tmp_path / "v.txt").unlink()
    assert cache.get(tmp_path) is None
