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
folder is read-only (a frozen build, a system install): there every process compiles as before
(`core.base.compiled_table`, which `core.base.regex_code` shares). Only a Cairn process installs it
(the `cairn` command, the build's worker); what a class does is unchanged (the same code object
`exec` would have compiled from the same text).
"""

from __future__ import annotations

import builtins
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from core.base.compiled_table import CompiledTable, pycache_path, roled

# More texts than this (older releases' piling up): the file is rewritten with this process's texts only.
# One command's are ~350 (~1 ms to load); all of Cairn's commands together well under this.
MAX_ENTRIES = 2048


def default_path(role: str = "") -> Path:
    """The table's file: in Cairn's own `__pycache__`, named for this interpreter's release (code objects
    are marshalled in its bytecode format; a patch release rebuilds the table once), optimize level and
    the process's `role` (`core.base.compiled_table.ROLES`)."""
    return pycache_path("dataclass-methods", *roled(role), sys.implementation.cache_tag, f"{sys.hexversion:x}", f"o{sys.flags.optimize}")


class MethodCache(CompiledTable[str, CodeType]):
    """Source text -> compiled code of the dataclass methods this process made, seeded from a file."""

    def accepts(self, key: object, value: object) -> bool:
        """A source text and its code object."""
        return isinstance(key, str) and isinstance(value, CodeType)

    def max_entries(self) -> int:
        """`MAX_ENTRIES`."""
        return MAX_ENTRIES

    def exec(self, source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None, /, **kwargs: Any) -> None:  # noqa: A002 - `exec`'s own parameter names
        """`exec` as `dataclasses` calls it, with the text's code from the table when it is there."""
        if not isinstance(source, str) or kwargs:
            builtins.exec(source, globals, locals, **kwargs)
            return
        code = self.known.get(source)
        if code is None:
            self.remember(source, code := compile(source, "<string>", "exec", dont_inherit=True))
        else:
            self.used[source] = code
        builtins.exec(code, globals, locals)


_INSTALLED: list[MethodCache] = []


def install(path: Path | None = None, role: str = "") -> MethodCache:
    """Make dataclasses in this process from the table in `path` (`default_path(role)`); idempotent."""
    if _INSTALLED:
        return _INSTALLED[0]
    from core.base.gc_pause import gc_paused
    from core.base.lean_import import INSPECT_STAND_INS, import_lean

    with gc_paused():  # dataclasses' own imports (inspect) and ~350 code objects: no garbage to look for
        # here, not at the top: the CLI imports this module first thing; `inspect` without `ast`, `tokenize` and
        # (on 3.11) `dis`: ~3.5 ms of every cold command (`core.base.lean_import.INSPECT_STAND_INS`)
        import_lean(INSPECT_STAND_INS, "dataclasses")
        import dataclasses

        cache = MethodCache(default_path(role) if path is None else path)
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # the module's global `exec`, found before the builtin
    _INSTALLED.append(cache)
    return cache


def save() -> None:
    """Write what this process compiled to the table, if anything is new and it may be written."""
    for cache in _INSTALLED:
        cache.save()
