"""Dataclass methods compiled once per install, not once per process: a cache like Python's own bytecode.

`@dataclass` writes the source of each class's `__init__`, `__repr__`, `__eq__` (and, frozen,
`__setattr__`, `__delattr__`, `__hash__`) and compiles it with `exec` when the class is made:
~0.15 ms a method, ~0.8 ms a frozen slotted class on a 2-core VM. A cold `cairn index` makes ~60
of them (Cairn's own, filelock's, markdown-it's) and the parallel build's worker ~30: parsing and
compiling that source was 8 % of a whole cold index of obsidian-tasks-demo (callgrind: ~220 M of
2,720 M instructions), paid again by every process.

The compiled code depends on the source text alone (the class's globals and defaults are passed
when it runs), so `install` gives the `dataclasses` module an `exec` of its own that looks the text
up in a table of code objects, compiling (and remembering) only texts it has not seen, and `save`
writes the table with `marshal` beside Cairn's bytecode, named for the interpreter's release, as
Python writes `.pyc` files: not where `sys.dont_write_bytecode` says not to, nor where the
folder is read-only (a frozen build, a system install): there every process compiles as before.
Only a Cairn process installs it (the `cairn` command, the build's worker); what a class does is
unchanged (the same code object `exec` would have compiled from the same text).
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

# More texts than this (older releases' piling up): the file is rewritten with this process's texts only.
# One command's are ~350 (~1 ms to load); all of Cairn's commands together well under this.
MAX_ENTRIES = 2048


def default_path() -> Path:
    """The table's file: in Cairn's own `__pycache__`, named for this interpreter's release (code objects
    are marshalled in its bytecode format; a patch release rebuilds the table once) and optimize level."""
    name = f"dataclass-methods.{sys.implementation.cache_tag}.{sys.hexversion:x}.o{sys.flags.optimize}.marshal"
    return Path(__file__).resolve().parent.parent / "__pycache__" / name


class MethodCache:
    """Source text -> compiled code of the dataclass methods this process made, seeded from a file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, CodeType] = _load(path)
        self.used: dict[str, CodeType] = {}
        self.compiled = 0  # texts not in the file: compiled here

    def exec(self, source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None, /, **kwargs: Any) -> None:  # noqa: A002 - `exec`'s own parameter names
        """`exec` as `dataclasses` calls it, with the text's code from the table when it is there."""
        if not isinstance(source, str) or kwargs:
            builtins.exec(source, globals, locals, **kwargs)
            return
        code = self.known.get(source)
        if code is None:
            code = self.known[source] = compile(source, "<string>", "exec", dont_inherit=True)
            self.compiled += 1
        self.used[source] = code
        builtins.exec(code, globals, locals)

    def save(self) -> bool:
        """Write the table if this process compiled texts the file lacked; False where it may not (or need not) be written.

        What another process wrote meanwhile (the build's worker, another command) is kept: the
        file is read again and merged. The file is replaced whole, never written in place.
        """
        if not self.compiled or sys.dont_write_bytecode or getattr(sys, "frozen", False):  # frozen: the bundle's folder, often unpacked anew per run
            return False
        table = {**_load(self.path), **self.known}
        if len(table) > MAX_ENTRIES:
            table = dict(self.used)
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # as Python writes a .pyc: the umask applies
            try:
                with os.fdopen(fd, "wb") as f:
                    marshal.dump(table, f)
                os.replace(tmp, self.path)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        except (OSError, ValueError):  # read-only, full, or a code object marshal refuses: compiled again next time
            return False
        self.known, self.compiled = table, 0
        return True


def _load(path: Path) -> dict[str, CodeType]:
    """The table in `path`, or an empty one where it is missing, unreadable or not such a table."""
    try:
        table = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {text: code for text, code in table.items() if isinstance(text, str) and isinstance(code, CodeType)}


_INSTALLED: list[MethodCache] = []


def install(path: Path | None = None) -> MethodCache:
    """Make dataclasses in this process from the table in `path` (`default_path()`); idempotent."""
    if _INSTALLED:
        return _INSTALLED[0]
    from core.base.gc_pause import gc_paused

    with gc_paused():  # dataclasses' own imports (inspect, ast, dis) and ~350 code objects: no garbage to look for
        import dataclasses  # here, not at the top: the CLI imports this module first thing

        cache = MethodCache(default_path() if path is None else path)
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # the module's global `exec`, found before the builtin
    _INSTALLED.append(cache)
    return cache


def save() -> None:
    """Write what this process compiled to the table, if anything is new and it may be written."""
    for cache in _INSTALLED:
        cache.save()
