"""Walk a vault and decide, file by file, what may be indexed.

The walk is read-only. Every file that is passed over for a reason the user
could act on is reported with a `SkipReason`, never silently dropped.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from core.base.models import SkippedFile, SkipReason

NOTE_SUFFIXES = (".md", ".markdown")
ALWAYS_IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash"})
IGNORE_FILES = (".gitignore", ".cairnignore")
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
_BINARY_PROBE = 8192


@dataclass(frozen=True, slots=True)
class ScanEntry:
    """A note file found by the walk; its content has not been read yet."""

    rel_path: str  # POSIX separators, NFC
    path: Path  # the path to open (may be a symlink inside the vault)
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class ScanResult:
    entries: tuple[ScanEntry, ...]
    skipped: tuple[SkippedFile, ...]


def normalise_rel_path(rel: str) -> str:
    """POSIX separators and NFC, so macOS (NFD) and Windows name the same note alike."""
    return unicodedata.normalize("NFC", rel.replace("\\", "/"))


def is_note_name(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIXES)


class IgnoreRules:
    """The vault's ignore rules: fixed folders plus `.gitignore` and `.cairnignore` patterns."""

    def __init__(self, root: Path, extra_patterns: tuple[str, ...] = ()) -> None:
        lines: list[str] = list(extra_patterns)
        for name in IGNORE_FILES:
            try:
                lines.extend((root / name).read_text("utf-8", "replace").splitlines())
            except OSError:
                continue
        self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignores(self, rel_path: str, is_dir: bool = False) -> bool:
        parts = rel_path.split("/")
        if any(p in ALWAYS_IGNORED_DIRS for p in parts):
            return True
        return self._spec.match_file(rel_path + "/" if is_dir else rel_path)


class Scanner:
    """Finds note files below a vault root, following symlinks only while they stay inside."""

    def __init__(self, root: Path, *, extra_ignores: tuple[str, ...] = (), max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = Path(root)
        self.real_root = Path(os.path.realpath(self.root))
        self.rules = IgnoreRules(self.root, extra_ignores)
        self.max_bytes = max_bytes

    def scan(self) -> ScanResult:
        entries: list[ScanEntry] = []
        skipped: list[SkippedFile] = []
        seen_dirs: set[str] = {str(self.real_root)}
        linked: list[tuple[Path, str]] = []
        entries.extend(self._walk(self.root, "", seen_dirs, skipped, linked))
        # Folder links are followed only after every real folder was walked, so a real folder
        # is never reported as a loop just because a link to it sorted first.
        while linked:
            path, rel = linked.pop(0)
            real = os.path.realpath(path)
            if real in seen_dirs:
                skipped.append(SkippedFile(rel, SkipReason.SYMLINK_LOOP, "folder link points back to a folder already walked"))
                continue
            seen_dirs.add(real)
            entries.extend(self._walk(path, rel, seen_dirs, skipped, linked))
        entries.sort(key=lambda e: e.rel_path)
        skipped.sort(key=lambda s: s.rel_path)
        return ScanResult(tuple(entries), tuple(skipped))

    def classify(self, rel_path: str) -> ScanEntry | SkippedFile | None:
        """Check one path the way `scan` would (used by the watcher). None: not a note or ignored."""
        rel = normalise_rel_path(rel_path)
        if os.path.isabs(rel) or any(p in ("", ".", "..") for p in rel.split("/")):
            return None  # not a path inside the vault: never read what the walk could not reach
        if not is_note_name(rel) or self.rules.ignores(rel):
            return None
        path = self._disk_path(rel)
        problem = self._symlink_problem(path, rel)
        if problem is not None:
            return problem
        return self._entry(path, rel)

    def _disk_path(self, rel: str) -> Path:
        """The path to open for an NFC rel_path: on Linux the name on disk may still be NFD."""
        path = self.root / rel
        if os.path.lexists(path):
            return path
        current = self.root
        for part in rel.split("/"):
            candidate = current / part
            if not os.path.lexists(candidate):
                try:
                    with os.scandir(current) as it:
                        match = next((d.name for d in it if unicodedata.normalize("NFC", d.name) == part), None)
                except OSError:
                    match = None
                if match is None:
                    return path
                candidate = current / match
            current = candidate
        return current

    def _walk(
        self, folder: Path, rel_folder: str, seen: set[str], skipped: list[SkippedFile], linked: list[tuple[Path, str]]
    ) -> Iterator[ScanEntry]:
        try:
            with os.scandir(folder) as it:
                children = sorted(it, key=lambda d: d.name)
        except OSError as exc:
            skipped.append(SkippedFile(rel_folder or ".", SkipReason.UNREADABLE, f"cannot list folder: {exc.strerror or exc}"))
            return
        for child in children:
            rel = normalise_rel_path(f"{rel_folder}/{child.name}" if rel_folder else child.name)
            try:
                is_link = child.is_symlink()
                is_dir = child.is_dir(follow_symlinks=True)
            except OSError:
                is_link, is_dir = True, False
            if self.rules.ignores(rel, is_dir=is_dir):
                continue
            if not is_dir and not is_note_name(child.name):
                continue
            if is_link:
                problem = self._symlink_problem(Path(child.path), rel)
                if problem is not None:
                    skipped.append(problem)
                    continue
            if is_dir and is_link:
                linked.append((Path(child.path), rel))
                continue
            if is_dir:
                real = os.path.realpath(child.path)
                if real in seen:
                    skipped.append(SkippedFile(rel, SkipReason.SYMLINK_LOOP, "folder link points back to a folder already walked"))
                    continue
                seen.add(real)
                yield from self._walk(Path(child.path), rel, seen, skipped, linked)
                continue
            entry = self._entry(Path(child.path), rel)
            if isinstance(entry, SkippedFile):
                skipped.append(entry)
            elif entry is not None:  # None: the file vanished while we looked
                yield entry

    def _symlink_problem(self, path: Path, rel: str) -> SkippedFile | None:
        try:
            if not path.is_symlink() and not _has_link_parent(path, self.root):
                return None
            real = Path(os.path.realpath(path, strict=True))
        except (OSError, RuntimeError) as exc:
            if _is_loop_error(exc):
                return SkippedFile(rel, SkipReason.SYMLINK_LOOP, "symbolic link loops back on itself")
            if path.is_symlink():
                return SkippedFile(rel, SkipReason.UNREADABLE, "symbolic link target does not exist")
            return None
        if real != self.real_root and self.real_root not in real.parents:
            return SkippedFile(rel, SkipReason.SYMLINK_ESCAPE, "symbolic link points outside the vault")
        return None

    def _entry(self, path: Path, rel: str) -> ScanEntry | SkippedFile | None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return SkippedFile(rel, SkipReason.UNREADABLE, f"cannot read file information: {exc.strerror or exc}")
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > self.max_bytes:
            return SkippedFile(rel, SkipReason.TOO_LARGE, f"{st.st_size:,} bytes is over the {self.max_bytes:,}-byte limit")
        return ScanEntry(rel, path, st.st_size, st.st_mtime_ns)


def read_note_bytes(entry: ScanEntry, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | SkippedFile:
    """Read a note's raw bytes, or say why it cannot be indexed."""
    try:
        with entry.path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except FileNotFoundError:
        return SkippedFile(entry.rel_path, SkipReason.UNREADABLE, "file vanished while it was being read")
    except OSError as exc:
        return SkippedFile(entry.rel_path, SkipReason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
    if len(raw) > max_bytes:
        return SkippedFile(entry.rel_path, SkipReason.TOO_LARGE, f"over the {max_bytes:,}-byte limit")
    if b"\x00" in raw:
        return SkippedFile(entry.rel_path, SkipReason.BINARY, "file contains NUL bytes; it is not a text note")
    return raw


def _has_link_parent(path: Path, root: Path) -> bool:
    current = path.parent
    while current != root and root in current.parents:
        if current.is_symlink():
            return True
        current = current.parent
    return False


def _is_loop_error(exc: BaseException) -> bool:
    import errno

    return isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
