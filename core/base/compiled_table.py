"""What a process compiled, kept once per install: a marshal table beside Cairn's bytecode.

Some work Python repeats in every process depends only on a text and the interpreter: the
methods `@dataclass` generates (`core.base.dataclass_code`), the programs regular expressions
compile to (`core.base.regex_code`). `CompiledTable` keeps such results as Python keeps `.pyc`
files: seeded from a `marshal` file in Cairn's own `__pycache__` (named by its caller for the
interpreter's release, so another Python never reads it), extended with what this process had to
compile, and written back at the end — not where `sys.dont_write_bytecode` says not to, nor in a
frozen build, nor where the folder is read-only: there every process compiles as before.
"""

from __future__ import annotations

import marshal
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

PYCACHE = Path(__file__).resolve().parent.parent / "__pycache__"  # core/__pycache__, beside Cairn's bytecode


def pycache_path(*name: str) -> Path:
    """The table file `name` (its parts joined by dots, `.marshal` added) in Cairn's own `__pycache__`."""
    return PYCACHE / (".".join(name) + ".marshal")


#: The kinds of process that keep a table of their own: each loads the whole file at its start, and one
#: file for all grew to ~1,400 dataclass texts (8 ms to load, where a cold index needs ~350: ~1-2 ms) once
#: the app, the MCP server, evaluations and older releases had added theirs.
ROLES = frozenset({"index", "search", "cli", "worker", "app"})


def command_role(argv: list[str]) -> str:
    """The table role of a `cairn` command with these arguments: a cold index and a search (the commands
    people time) have their own, every other command shares one."""
    return argv[1] if argv[1:2] in (["index"], ["search"]) else "cli"


def roled(role: str) -> tuple[str, ...]:
    """The name part that gives `role`'s processes a table of their own (none for ""; an unknown role is refused)."""
    if role and role not in ROLES:
        raise ValueError(f"unknown table role {role!r}")
    return (role,) if role else ()


def may_write() -> bool:
    """Whether this process may write beside Cairn's bytecode: not where Python writes no `.pyc` files
    (`sys.dont_write_bytecode`), nor in a frozen build (the bundle's folder, often unpacked anew per run)."""
    return not sys.dont_write_bytecode and not getattr(sys, "frozen", False)


def replace_file(path: Path, parts: Iterable[bytes]) -> bool:
    """Replace `path` with `parts` by a rename (a cache every reader checks: not fsynced), made as Python
    makes a `.pyc` (the umask applies); False where it cannot be written (read-only, full)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o666)
        try:
            with os.fdopen(fd, "wb") as f:
                f.writelines(parts)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True


class CompiledTable(ABC, Generic[K, V]):
    """Key -> compiled value this process used, seeded from the file at `path`.

    A subclass says which loaded entries are well formed (`accepts`) and how many the file may
    hold (`max_entries`); it looks keys up in `known` and records its own compilations with
    `remember`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[K, V] = self.load()
        self.used: dict[K, V] = {}
        self.compiled = 0  # entries not in the file: compiled here

    @abstractmethod
    def accepts(self, key: object, value: object) -> bool:
        """Whether a loaded entry has the shape this table stores (anything else is dropped)."""

    @abstractmethod
    def max_entries(self) -> int:
        """Past this many entries (older releases' piling up) the file keeps this process's entries only."""

    def remember(self, key: K, value: V) -> None:
        """Keep what this process compiled, for itself and for the file."""
        self.known[key] = self.used[key] = value
        self.compiled += 1

    def load(self) -> dict[K, V]:
        """The table in the file, or an empty one where it is missing, unreadable or not such a table."""
        try:
            table = marshal.loads(self.path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not isinstance(table, dict):
            return {}
        return {key: value for key, value in table.items() if self.accepts(key, value)}

    def save(self) -> bool:
        """Write the table if this process compiled entries the file lacked; False where it may not (or need not) be written.

        What another process wrote meanwhile (the build's worker, another command) is kept: the
        file is read again and merged. The file is replaced whole, never written in place.
        """
        if not self.compiled or not may_write():
            return False
        try:
            table = {**self.load(), **self.known}
            if len(table) > self.max_entries():
                table = dict(self.used)
        except RuntimeError:  # another thread (the app's, at its end) compiled meanwhile: written next time
            return False
        try:
            data = marshal.dumps(table)
        except ValueError:  # a value marshal refuses: compiled again next time
            return False
        if not replace_file(self.path, [data]):  # read-only or full: compiled again next time
            return False
        self.known, self.compiled = table, 0
        return True
