"""`make_private`: owner-only folders and files below an index, symbolic links left alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.base.atomic import make_private

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
