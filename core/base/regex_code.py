"""Regular expressions compiled once per install, not once per process: a cache like Python's own bytecode.

Every Cairn process compiles ~210 regular expressions (Cairn's own, Whoosh's, markdown-it's,
PyYAML's, filelock's): 32-37 ms of a cold `cairn index` of obsidian-tasks-demo (~6 % of the run),
and again in the parallel build's worker. `re` keeps what it compiled for one process only.

Compiling a pattern is parsing its text (`re._parser.parse`), generating the matcher's program
(`re._compiler._code`) and handing both to `_sre.compile`; everything but the pattern object it
returns is plain data (the flags, a list of ints, the group count, the name -> group map and its
inverse) that depends on the text, the flags and the interpreter alone. `install` gives
`re._compiler` a `compile` that looks (type, text, flags) up in a table of those arguments,
seeded from a `marshal` file beside Cairn's bytecode (`core.base.compiled_table`, shared with
`core.base.dataclass_code`), and calls `_sre.compile` with them; a text it has not seen is
compiled as Python compiles it and remembered — kept in the table once a second process compiled
it too (the first appends its digest to a log beside the table), so a text each process builds
anew (markdown-it's set of terminators joined in hash order, a search's words) is never written
out, nor rewrites the table each run. The file is named for the interpreter's release and
`_sre`'s own version (a program from another one is never read), and written only where Python
would write bytecode. What a pattern does is unchanged: `_sre.compile` gets the very arguments
Python's own path would give it (`_sre` validates the program too).

Left to Python's own path, every time: a `re.DEBUG` compilation (it prints the program), an
already parsed pattern (`re.Scanner`), a text of a `str` or `bytes` subclass (parsed here but not
kept), and a text the parser might warn about (a possible nested set or set operation, a
conditional group's reference, a `bytes` group name beyond ASCII): it is never kept, so its warning
is still given by every process, pointing at the caller as before. Only the releases whose
`re._compiler.compile` this follows (3.11-3.13) install it.
"""

from __future__ import annotations

import _sre
import marshal
import os
import sys
import zlib
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from re import Pattern, _compiler, _parser  # type: ignore[attr-defined]  # the modules `re` compiles with
from typing import Any

from core.base.compiled_table import CompiledTable, may_write, pycache_path, roled

# (is bytes, text, flags) -> `_sre.compile`'s arguments after the pattern: flags with the inline ones,
# the program, the group count, the name -> group map and group -> name tuple; in the table the program
# is bytes (`_WORDS`): a list of ints costs `marshal` 3-5 times as much to load, for every pattern of
# every command, where a pattern used is made a list again in ~2 us.
Key = tuple[bool, str | bytes, int]
Arguments = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
Stored = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]

# More entries than this (older releases' piling up): the file is rewritten with this process's only.
# `cairn index` and `cairn search` together keep ~265 (117 kB, ~0.8 ms to load); all of Cairn's commands well under this.
MAX_ENTRIES = 2048
# Digests in the log of texts met once past this (~1 a run from texts made anew by each process): it starts over.
MAX_SEEN = 4096
_WORDS = "I"  # array type of the programs' code words and the log's CRC-32 digests: 4 bytes where Cairn runs, this machine's order
RELEASES = ((3, 11), (3, 12), (3, 13))  # whose `re._compiler.compile` this follows (the same body in each)
_DEBUG = 128  # re.DEBUG
_VERBOSE = 64  # re.VERBOSE
_INLINE_FLAGS = frozenset("aiLmsux-")  # what may follow `(?` in a group of inline flags (`(?x)`, `(?i-s:...)`)
_SET_WARNINGS = ("[[", "--", "&&", "~~", "||")  # the parser's "possible nested set / set operation" (FutureWarning)
_TABLE_FAILS = (TypeError, ValueError, RuntimeError, OverflowError)  # what `_sre.compile` raises on arguments it refuses


def default_path(role: str = "") -> Path:
    """The table's file: in Cairn's own `__pycache__`, named for this interpreter's release, `_sre`'s
    program format (its version, code word size and unbounded repeat), the machine's byte order and the
    process's `role` (`core.base.compiled_table.ROLES`)."""
    sre = f"sre{_sre.MAGIC}-{_sre.CODESIZE}-{_sre.MAXREPEAT:x}-{sys.byteorder}"
    return pycache_path("regex-code", *roled(role), sys.implementation.cache_tag, f"{sys.hexversion:x}", sre)


def may_warn(text: str | bytes, flags: int) -> bool:
    """Whether parsing `text` could make the parser warn (3.11-3.13): such a text is never kept in the table.

    Told from the text, erring towards yes: a character set that opens with `[` or holds a doubled
    set operator (`--`, `&&`, `~~`, `||`: "possible nested set / set difference ..."), a conditional
    group `(?(` (its reference's name), a `bytes` text beyond ASCII (a group name that is not ASCII).
    Where a `#` may open a comment (verbose, inline flags, `(?#`) the sets are not told apart: any
    of those marks after the first `[` counts.
    """
    if isinstance(text, bytes):
        if not text.isascii():
            return True
        text = text.decode("ascii")
    if "(?(" in text:
        return True
    if "#" in text and (flags & _VERBOSE or "(?#" in text or any(part[:1] in _INLINE_FLAGS for part in text.split("(?")[1:])):
        start = text.find("[")
        return start >= 0 and any(text.find(mark, start) >= 0 for mark in _SET_WARNINGS)
    return any(body.startswith("[") or any(mark in body for mark in _SET_WARNINGS) for body in set_bodies(text))


def set_bodies(text: str) -> Iterator[str]:
    """The text between the brackets of each character set in `text`, read as the parser reads them:
    a backslash and the character after it are one item, a `]` first (after an optional `^`) is a member."""
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char != "[":
            at += 2 if char == "\\" else 1
            continue
        end = at + 1
        end += text.startswith("^", end)
        end += text.startswith("]", end)
        while end < size and text[end] != "]":
            end += 2 if text[end] == "\\" else 1
        yield text[at + 1 : end]
        at = end + 1


def arguments(parsed: _parser.SubPattern, flags: int) -> Arguments:
    """`_sre.compile`'s arguments after the pattern for a parsed text, as `re._compiler.compile` makes them."""
    state = parsed.state
    indexgroup: list[str | None] = [None] * state.groups
    for name, group in state.groupdict.items():
        indexgroup[group] = name
    return int(flags | state.flags), _compiler._code(parsed, flags), state.groups - 1, state.groupdict, tuple(indexgroup)


class PatternCache(CompiledTable[Key, Stored]):
    """(type, text, flags) -> the compiled pattern's arguments to `_sre.compile`, seeded from a file.

    A text is kept once two processes compiled it: the first appends its digest to the log of
    texts met once (`.seen` beside the table), the next one, finding the digest there, keeps its
    arguments in the table. A text each process makes anew (a set's members in hash order, a
    search's words) only ever costs a few bytes appended to the log, and the table's rewrite is
    left to runs that met texts worth keeping.
    """

    def __init__(self, path: Path, original: Callable[..., Pattern[Any]]) -> None:
        super().__init__(path)
        self.original = original  # `re._compiler.compile` as it was
        self.log = path.with_suffix(".seen")
        self.seen, self.log_ok = read_log(self.log)  # digests of texts earlier processes met
        self.met: set[int] = set()  # digests of texts first met by this process
        self.unlogged: list[int] = []  # ... and not yet in the log

    def accepts(self, key: object, value: object) -> bool:
        """A (bool, text, int) key and a 5-tuple with the program in bytes (`_sre.compile` checks the rest when it is used)."""
        return type(key) is tuple and len(key) == 3 and type(value) is tuple and len(value) == 5 and type(value[1]) is bytes

    def max_entries(self) -> int:
        """`MAX_ENTRIES`."""
        return MAX_ENTRIES

    def compile(self, p: object, flags: int = 0) -> Pattern[Any]:
        """`re._compiler.compile` as `re` calls it, with the pattern's arguments from the table when they are there."""
        if not isinstance(p, (str, bytes)) or not isinstance(flags, int) or flags & _DEBUG:
            return self.original(p, flags)
        kept = type(p) is str or type(p) is bytes
        key = (type(p) is bytes, p, int(flags))
        if kept and (known := self.known.get(key)) is not None:
            pattern = self.from_table(key, known)
            if pattern is not None:
                return pattern
        parsed = _parser.parse(p, flags)  # in this frame, as in the original's: the parser's warnings name re.compile's caller
        found = arguments(parsed, flags)
        pattern = _sre.compile(p, *found)
        if kept and not may_warn(p, flags):
            self.keep(key, found)
        return pattern

    def keep(self, key: Key, found: Arguments) -> None:
        """Remember a text's arguments if an earlier process met it too (its digest is in the log), else its digest."""
        digest = zlib.crc32(marshal.dumps(key))
        if digest in self.seen:
            flags, program, groups, groupindex, indexgroup = found
            self.remember(key, (flags, array(_WORDS, program).tobytes(), groups, groupindex, indexgroup))
        elif digest not in self.met:
            self.met.add(digest)
            self.unlogged.append(digest)

    def save(self) -> bool:
        """Append the digests of texts first met here to the log, and write the table if it gained texts."""
        logged = self.append_log()
        return super().save() or logged

    def append_log(self) -> bool:
        """Append this process's new digests to the log (a few bytes, in one write); start it over when it is
        damaged (a torn write) or past `MAX_SEEN`. False where nothing was (or may be) written."""
        if not self.unlogged or not may_write():
            return False
        over = not self.log_ok or len(self.seen) + len(self.unlogged) > MAX_SEEN
        data = array(_WORDS, self.unlogged).tobytes()
        try:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.log, os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if over else os.O_APPEND), 0o666)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:  # read-only, full: met again next time
            return False
        self.unlogged, self.log_ok = [], True
        return True

    def from_table(self, key: Key, known: Stored) -> Pattern[Any] | None:
        """The pattern made from the table's arguments; None (and the entry dropped) where `_sre` refuses them."""
        flags, program, groups, groupindex, indexgroup = known
        try:
            pattern = _sre.compile(key[1], flags, array(_WORDS, program).tolist(), groups, groupindex, indexgroup)
        except _TABLE_FAILS:  # a damaged file that still unmarshals: compiled anew
            self.known.pop(key, None)
            return None
        self.used[key] = known
        return pattern


def read_log(path: Path) -> tuple[set[int], bool]:
    """The digests in the log at `path` (none where it is missing) and whether it is whole."""
    try:
        data = path.read_bytes()
    except OSError:
        return set(), True
    digests = array(_WORDS)
    whole = len(data) % digests.itemsize == 0
    if whole:
        digests.frombytes(data)
    return set(digests), whole


_INSTALLED: list[PatternCache] = []


def install(path: Path | None = None, role: str = "") -> PatternCache | None:
    """Compile regular expressions in this process from the table in `path` (`default_path(role)`); idempotent.

    None (nothing installed) on a release whose compiler this does not follow, and where there is no
    table and none may be written (a frozen build, `PYTHONDONTWRITEBYTECODE`): Python's own path, without
    the few microseconds a pattern this one adds to look for a text it would keep.
    """
    if _INSTALLED:
        return _INSTALLED[0]
    path = default_path(role) if path is None else path
    if sys.version_info[:2] not in RELEASES or not (may_write() or path.exists()):
        return None
    from core.base.gc_pause import gc_paused

    with gc_paused():  # ~250 tuples and dicts: no garbage to look for
        cache = PatternCache(path, _compiler.compile)
    _compiler.compile = cache.compile
    _INSTALLED.append(cache)
    return cache


def save() -> None:
    """Write what this process compiled to the table, if anything is new and it may be written."""
    for cache in _INSTALLED:
        cache.save()
