"""Walk a vault and decide, file by file, what may be indexed.

The walk is read-only. Every file that is passed over for a reason the user
could act on is reported with a `SkipReason`, never silently dropped.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from core.base.models import FileWarning, SkippedFile, SkipReason
from core.vault.ignore_suffixes import normalize, suffix_matcher
from core.vault.kinds import DEFAULT_KINDS_OFF, kind_of, kind_patterns
from core.vault.note_bytes import DEFAULT_MAX_BYTES
from core.vault.note_bytes import as_utf8 as as_utf8  # re-exported: where the readers of notes import it from
from core.vault.note_bytes import read_note_bytes as read_note_bytes

NOTE_SUFFIXES = (".md", ".markdown")
ALWAYS_IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash"})
IGNORE_FILES = (".gitignore", ".cairnignore")
DEFAULT_MAX_ATTACHMENT_BYTES = 200 * 1024 * 1024
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
    """A walk of a vault: the notes to index, the files left out and why, and problems with its ignore rules."""

    entries: tuple[ScanEntry, ...]
    skipped: tuple[SkippedFile, ...]
    warnings: tuple[FileWarning, ...] = ()  # e.g. ignore-file lines that are not valid patterns


def normalise_rel_path(rel: str) -> str:
    """POSIX separators and NFC, so macOS (NFD) and Windows name the same note alike."""
    return unicodedata.normalize("NFC", rel.replace("\\", "/"))


def printable_name(rel: str) -> str:
    """A name that can be written as UTF-8: bytes that were not UTF-8 in the file name
    (kept by Python as lone surrogates) become U+FFFD, so a report about them can be saved."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if _has_surrogates(rel) else rel


def _has_surrogates(text: str) -> bool:
    if text.isascii():  # nearly every name: no encoding to try
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def is_note_name(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIXES)


def is_indexable_name(name: str) -> bool:
    """A note, or an attachment Cairn can read (`core.vault.kinds`: PDF, Word, e-book, web page, mail, chat export, text)."""
    return name.lower().endswith(NOTE_SUFFIXES) or kind_of(name) is not None


class IgnoreRules:
    """The vault's ignore rules: fixed folders plus `.gitignore` and `.cairnignore` patterns."""

    def __init__(self, root: Path, extra_patterns: tuple[str, ...] = ()) -> None:
        self.warnings: list[FileWarning] = []
        files: list[tuple[str, list[str]]] = []
        for name in IGNORE_FILES:
            try:
                files.append((name, (root / name).read_text("utf-8", "replace").splitlines()))
            except (OSError, ValueError):
                continue
        # Only `*.suffix` lines (the kinds switched off, most vaults' whole rules): no pathspec.
        self._suffixes = suffix_matcher([*extra_patterns, *(line for _, lines in files for line in lines)])
        if self._suffixes is not None:
            return
        lines = self._valid_lines("settings", extra_patterns)
        for name, file_lines in files:
            lines.extend(self._valid_lines(name, file_lines))
        import pathspec  # on first scan, not on import: a keyword search never scans (~60 ms)

        self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def _valid_lines(self, source: str, lines: Iterable[str]) -> list[str]:
        """The lines pathspec accepts. One bad line (`foo\\`, `!`, `[z-a]`) is skipped with a
        warning instead of making the whole file, and with it the vault, unreadable."""
        import pathspec

        good: list[str] = []
        for number, line in enumerate(lines, 1):
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except Exception as exc:  # noqa: BLE001 - pathspec raises ValueError or re.error, among others
                self.warnings.append(
                    FileWarning(source, "ignore_pattern", f"line {number} {line!r} is not a valid pattern and is ignored: {exc}")
                )
                continue
            good.append(line)
        return good

    def ignores(self, rel_path: str, is_dir: bool = False) -> bool:
        parts = rel_path.split("/")
        if any(p in ALWAYS_IGNORED_DIRS for p in parts):
            return True
        path = rel_path + "/" if is_dir else rel_path
        if self._suffixes is not None:
            return self._suffixes.match(normalize(path)) is not None
        return bool(self._spec.match_file(path))


class Scanner:
    """Finds note files below a vault root, following symlinks only while they stay inside."""

    def __init__(
        self,
        root: Path,
        *,
        extra_ignores: tuple[str, ...] = (),
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_attachment_bytes: int = DEFAULT_MAX_ATTACHMENT_BYTES,
        kinds_off: tuple[str, ...] = DEFAULT_KINDS_OFF,
    ) -> None:
        self.root = Path(root)
        self.real_root = Path(os.path.realpath(self.root))
        # A kind switched off is one more ignore pattern: the walk and `classify` (the watcher) skip it.
        self.rules = IgnoreRules(self.root, extra_ignores + kind_patterns(kinds_off))
        self.max_bytes = max_bytes
        self.max_attachment_bytes = max_attachment_bytes
        self._reals: dict[str, str] = {}  # during a scan: a walked folder's path -> its real path

    def scan(self) -> ScanResult:
        entries: list[ScanEntry] = []
        skipped: list[SkippedFile] = []
        seen_dirs: set[str] = {str(self.real_root)}
        linked: list[tuple[Path, str]] = []
        self._reals = {os.fspath(self.root): str(self.real_root)}
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
            self._reals[os.fspath(path)] = real
            entries.extend(self._walk(path, rel, seen_dirs, skipped, linked))
        entries = _unique_names(entries, skipped)
        skipped.sort(key=lambda s: s.rel_path)
        return ScanResult(tuple(entries), tuple(skipped), tuple(self.rules.warnings))

    def classify(self, rel_path: str) -> ScanEntry | SkippedFile | None:
        """Check one path the way `scan` would (used by the watcher). None: not a note or ignored."""
        rel = normalise_rel_path(rel_path)
        if _has_surrogates(rel) and is_indexable_name(rel):
            return SkippedFile(printable_name(rel), SkipReason.BAD_NAME, "the file name is not valid UTF-8; rename it to index it")
        if os.path.isabs(rel) or any(p in ("", ".", "..") for p in rel.split("/")):
            return None  # not a path inside the vault: never read what the walk could not reach
        if not is_indexable_name(rel) or self.rules.ignores(rel):
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
            if "\\" in child.name and os.sep != "\\":
                self._backslash_name(child, rel_folder, skipped)
                continue
            rel = normalise_rel_path(f"{rel_folder}/{child.name}" if rel_folder else child.name)
            try:
                yield from self._child(folder, child, rel, seen, skipped, linked)
            except Exception as exc:  # noqa: BLE001 - one odd file or folder never stops the walk
                skipped.append(SkippedFile(printable_name(rel), SkipReason.UNREADABLE, f"cannot scan: {type(exc).__name__}: {exc}"))

    def _backslash_name(self, child: os.DirEntry[str], rel_folder: str, skipped: list[SkippedFile]) -> None:
        """A backslash is a folder separator on Windows, and rel_paths use it as one: `a\\b.md` on
        Linux would become the note `a/b.md` (or `/.md`). Such a name is reported, never indexed."""
        try:
            relevant = is_note_name(child.name) or child.is_dir(follow_symlinks=False)
        except OSError:
            relevant = False
        if relevant:
            rel = unicodedata.normalize("NFC", f"{rel_folder}/{child.name}" if rel_folder else child.name)
            why = "the name holds a backslash, a folder separator on Windows; rename it to index it"
            skipped.append(SkippedFile(printable_name(rel), SkipReason.BAD_NAME, why))

    def _child(
        self,
        folder: Path,
        child: os.DirEntry[str],
        rel: str,
        seen: set[str],
        skipped: list[SkippedFile],
        linked: list[tuple[Path, str]],
    ) -> Iterator[ScanEntry]:
        try:
            is_link = child.is_symlink()
            is_dir = child.is_dir(follow_symlinks=True)
        except OSError:
            is_link, is_dir = True, False
        if self.rules.ignores(rel, is_dir=is_dir):
            return
        if not is_dir and not is_indexable_name(child.name):
            return
        if _has_surrogates(rel):
            skipped.append(
                SkippedFile(printable_name(rel), SkipReason.BAD_NAME, "the file or folder name is not valid UTF-8; rename it to index it")
            )
            return
        if is_link:
            problem = self._symlink_problem(Path(child.path), rel)
            if problem is not None:
                skipped.append(problem)
                return
        if is_dir and is_link:
            linked.append((Path(child.path), rel))
            return
        if is_dir:
            real = self._real_folder(child)
            if real in seen:
                skipped.append(SkippedFile(rel, SkipReason.SYMLINK_LOOP, "folder link points back to a folder already walked"))
                return
            seen.add(real)
            yield from self._walk(Path(child.path), rel, seen, skipped, linked)
            return
        entry = self._entry(folder / child.name, rel)  # as Path(child.path), without parsing the whole path
        if isinstance(entry, SkippedFile):
            skipped.append(entry)
        elif entry is not None:  # None: deleted since the folder was listed
            yield entry

    def _real_folder(self, child: os.DirEntry[str]) -> str:
        """`os.path.realpath` of a folder that is no link: on POSIX its folder's real path and its
        name, without an `lstat` of every part of the path (~6 a folder, ~20 % of a scan of
        simonw-til's 123 folders). Where the folder's own is not known, and on Windows (whose
        `realpath` asks the system for the final name), `realpath` itself."""
        parent = self._reals.get(os.path.dirname(child.path)) if os.name != "nt" else None
        real = os.path.realpath(child.path) if parent is None else os.path.join(parent, child.name)
        self._reals[child.path] = real
        return real

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
            # A FIFO or device named like a note: opening it could block the walk forever.
            return SkippedFile(rel, SkipReason.NOT_A_FILE, "not a regular file (a pipe, socket or device); never opened")
        # PDFs, e-books, mailboxes... are read page by page or streamed and can be far larger
        # than any note; text files and web pages are read whole.
        kind = kind_of(rel)
        limit = self.max_attachment_bytes if kind is not None and kind.big else self.max_bytes
        if st.st_size > limit:
            return SkippedFile(rel, SkipReason.TOO_LARGE, f"{st.st_size:,} bytes is over the {limit:,}-byte limit")
        return ScanEntry(rel, path, st.st_size, st.st_mtime_ns)


def _unique_names(entries: list[ScanEntry], skipped: list[SkippedFile]) -> list[ScanEntry]:
    """One entry per rel_path. Names are NFC-normalised so a note keeps its identity across
    macOS, Windows and Linux; two files whose names differ only by normalisation (`café.md`
    as NFC and as NFD, possible on Linux) would collide. The first (by name on disk) is
    kept; the other is reported, never silently merged into it."""
    entries.sort(key=_rel_path)
    if any(a.rel_path == b.rel_path for a, b in zip(entries, entries[1:])):  # rare: only then the names on disk
        entries.sort(key=lambda e: (e.rel_path, unicodedata.is_normalized("NFC", e.path.name) is False, os.fsencode(e.path.name)))
    unique: list[ScanEntry] = []
    for entry in entries:
        if unique and unique[-1].rel_path == entry.rel_path:
            skipped.append(
                SkippedFile(
                    entry.rel_path,
                    SkipReason.DUPLICATE_NAME,
                    f"another file has the same name in a different Unicode form ({unique[-1].path.name!a} and "
                    f"{entry.path.name!a}); only the first is indexed — rename one",
                )
            )
            continue
        unique.append(entry)
    return unique


def _rel_path(entry: ScanEntry) -> str:
    return entry.rel_path


def _has_link_parent(path: Path, root: Path) -> bool:
    current = path.parent
    while current != root and root in current.parents:
        if current.is_symlink():
            return True
        current = current.parent
    return False


def _is_loop_error(exc: BaseException) -> bool:
    return isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
