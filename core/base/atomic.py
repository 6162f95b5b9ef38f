"""Crash-safe writes: a reader sees either the old file or the new one, never half."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` by a rename. With `durable` the bytes are on disk before the
    rename (fsync), so a power cut leaves the old file or the new one; without, only a running
    reader is sure of that: for files whose every reader checks them and rebuilds them from
    another file when they do not match (a cache), where the fsync (0.1-4 ms of wall on a busy
    disk) buys nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def make_private(path: Path, *, tree: bool = False) -> None:
    """Owner-only permissions (folders 0700, files 0600): indexes hold the full text of notes,
    restricted ones too, so other accounts on the machine must not read them. With `tree`,
    everything below `path` as well. A no-op where the OS has no such modes (Windows) and
    where a file vanished meanwhile (a concurrent commit's merge)."""
    if os.name == "nt":
        return
    try:
        if not path.is_symlink():
            _owner_only(path, path.is_dir(), path.lstat().st_mode)
    except OSError:
        pass
    if tree:
        _owner_only_below(path)


def _owner_only(path: str | Path, is_dir: bool, st_mode: int) -> None:
    mode = 0o700 if is_dir else 0o600
    if (st_mode & 0o777) != mode:
        os.chmod(path, mode)


def _owner_only_below(folder: str | Path) -> None:
    """Everything below `folder`, symbolic links left alone (nor followed). With `scandir`, one
    `lstat` an entry: an index's folder is gone over after every commit (~2 ms a commit with
    `rglob`'s three `stat` calls a file)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            _owner_only(entry.path, is_dir, entry.stat(follow_symlinks=False).st_mode)
        except OSError:
            continue
        if is_dir:
            _owner_only_below(entry.path)


def remove_tree_contents(folder: Path) -> None:
    """Empty `folder`, files and sub-folders alike: a kill -9 during Whoosh's first commit leaves
    its posting pool (`chunks.tmp/`) as a folder, which a plain `unlink` cannot remove."""
    if not folder.exists():
        return
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink(missing_ok=True)


def write_json_atomic(path: Path, payload: Any, *, compact: bool = False, durable: bool = True) -> None:
    if compact:
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    else:
        data = json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8")
    write_bytes_atomic(path, data + b"\n", durable=durable)


def read_json(path: Path) -> Any:
    with path.open("rb") as fh:
        return json.loads(fh.read().decode("utf-8"))
