"""What a folder's file holds, read again only when the file changes.

Searches ask for a vault's word and name vectors every time; reading the file each time would
cost milliseconds a search, and keeping it forever would miss the refresh an index job writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


class StampCache(Generic[T]):
    """`load(folder)` per folder, kept while `folder / file_name`'s modification time is the same."""

    def __init__(self, file_name: str, load: Callable[[Path], T | None]) -> None:
        self._file_name = file_name
        self._load = load
        self._kept: dict[Path, tuple[float, T | None]] = {}
        self._lock = threading.Lock()

    def get(self, folder: Path) -> T | None:
        """The folder's value; None when its file is missing (or `load` finds nothing usable)."""
        try:
            stamp = (folder / self._file_name).stat().st_mtime
        except OSError:
            return None
        with self._lock:
            hit = self._kept.get(folder)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        found = self._load(folder)
        with self._lock:
            self._kept[folder] = (stamp, found)
        return found
