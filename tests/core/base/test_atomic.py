"""`make_private`: owner-only folders and files below an index, symbolic links left alone; atomic writes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from core.base.atomic import make_private, write_bytes_atomic, write_json_atomic

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_tree_becomes_owner_only_and_links_are_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "index"
    (root / "sub" / "deeper").mkdir(parents=True, mode=0o755)
    files = [root / "a.seg", root / "sub" / "b.seg", root / "sub" / "deeper" / "c.seg"]
    for f in files:
        f.write_bytes(b"x")
        f.chmod(0o644)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"y")
    outside.chmod(0o644)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    (root / "link").symlink_to(outside)
    (root / "dirlink").symlink_to(elsewhere, target_is_directory=True)
    root.chmod(0o755)

    make_private(root, tree=True)

    assert _mode(root) == _mode(root / "sub") == _mode(root / "sub" / "deeper") == 0o700
    assert all(_mode(f) == 0o600 for f in files)
    assert _mode(outside) == 0o644  # a link's target is not the index's
    assert _mode(elsewhere) == 0o755  # nor is a linked folder walked into


def test_without_tree_only_the_path_changes(tmp_path: Path) -> None:
    root = tmp_path / "index"
    root.mkdir(mode=0o755)
    (root / "a").write_bytes(b"x")
    (root / "a").chmod(0o644)
    make_private(root)
    assert _mode(root) == 0o700
    assert _mode(root / "a") == 0o644


def test_a_missing_path_is_no_error(tmp_path: Path) -> None:
    make_private(tmp_path / "gone", tree=True)


def test_a_write_replaces_the_file_durably_unless_asked_not_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.base.atomic as atomic

    synced: list[int] = []
    monkeypatch.setattr(atomic.os, "fsync", synced.append)
    path = tmp_path / "sub" / "f.json"
    write_json_atomic(path, {"a": 1})
    assert len(synced) == 1 and json.loads(path.read_text()) == {"a": 1}
    write_json_atomic(path, {"a": 2}, compact=True, durable=False)
    assert len(synced) == 1 and path.read_text() == '{"a":2}\n'
    write_bytes_atomic(path, b"x", durable=False)
    assert len(synced) == 1 and path.read_bytes() == b"x"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]  # no temp file left
