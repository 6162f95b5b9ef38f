"""The bytecode of what a `cairn` command imports, kept in one file: each module found and read
without the import system's search and its own `.pyc` file.

A cold `cairn index` imports ~220 modules from source files (Cairn's, Whoosh's, the standard
library's). For each, Python's path finder looks through the folders on `sys.path` (or the
package's own) and its loader opens, checks and reads the module's `.pyc` file: ~30 µs a module
of Python code and system calls, ~5 ms of a 0.16 s cold index of a 200-note vault. `ModuleCode`
keeps the bytecode of what a kind of process imported in one file beside Cairn's own bytecode
(like `core.base.regex_code`'s table) and serves the next process of that kind from it: one
`pread` a module.

It answers as the import system would, or not at all (the module is then imported as always):

- a module is served only while its source file has the size and modification time it had when
  its code was kept (what a `.pyc` file is checked by, to the nanosecond here);
- and while its folder, and for a top-level module every folder on `sys.path` before it, has the
  modification time it had then: no file was added, removed or renamed there since, so the search
  would find the same file (Python's own path finder trusts a folder's listing on the same rule);
- only where `sys.path` is what it was then, and only from just before Python's path finder on
  `sys.meta_path`, so a finder placed before it still comes first;
- each module gets Python's own `SourceFileLoader` (only its `get_code` reads the table) and the
  spec the path finder makes: `__file__`, `__cached__`, `get_source`, tracebacks and resources are
  as before.

The file is written at the process's end with what it imported the usual way (not where
`sys.dont_write_bytecode` says not to, nor in a frozen build: `compiled_table.may_write`), and
only read in a process that installed it: a test or a script importing Cairn never is.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader
from pathlib import Path
from typing import Any

from core.base.compiled_table import may_write, pycache_path, replace_file, roled

FORMAT = 1
MAX_MODULES = 3000  # past this, a save keeps the modules of the process saving first (a table stays a few MB)
_HEAD = 8  # the header's length, little-endian, before the header (marshal) and the code
Entry = tuple[str, bool, int, int, int, int]  # source file, is a package, its mtime_ns and size, the code's offset and length


def default_path(role: str = "") -> Path:
    """The table of `role`'s processes, for this interpreter and optimisation level."""
    return pycache_path("module-code", *roled(role), sys.implementation.cache_tag, f"{sys.hexversion:x}", f"o{sys.flags.optimize}")


def read_at(fd: int, length: int, offset: int) -> bytes:
    """`length` bytes of the file `fd` from `offset`: `os.pread` (no shared position: threads may import at
    once), or where the system has none (Windows) a seek and a read under a lock."""
    pread = getattr(os, "pread", None)
    if pread is not None:
        return bytes(pread(fd, length, offset))
    with _seek_lock():
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)


def _seek_lock() -> Any:
    if not _SEEK:
        import threading  # only where there is no `pread`: the CLI imports this module before `threading`

        _SEEK.append(threading.Lock())
    return _SEEK[0]


_SEEK: list[Any] = []


def folder_stamp(folder: str) -> int | None:
    """A folder's (or a `sys.path` entry's) modification time; None where it is not there."""
    try:
        return os.stat(folder).st_mtime_ns
    except (OSError, ValueError):
        return None


class TableLoader(SourceFileLoader):
    """Python's source loader, whose `get_code` reads the module's code from the table."""

    def __init__(self, fullname: str, path: str, table: ModuleCode) -> None:
        super().__init__(fullname, path)
        self.table = table

    def get_code(self, fullname: str) -> Any:
        code = self.table.code(fullname, self.path)
        return code if code is not None else super().get_code(fullname)


class ModuleCode:
    """A meta path finder serving modules from the table in `path` (see the module's docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._index: dict[str, Entry] = {}
        self._stamps: dict[str, int | None] = {}  # folder -> its modification time when the table was written
        self._base = 0
        self._seen: dict[str, bool] = {}  # folder -> unchanged since (asked once a process)
        self._path_ok = False
        self._before = frozenset(sys.modules)  # imported before the table could serve them: no reason to write it
        self._start_path = list(sys.path)  # a process that changed it writes no table (the next one starts from this one)
        self.served = 0
        self._load()

    def _load(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return
        try:
            size = int.from_bytes(read_at(fd, _HEAD, 0), "little")
            if _HEAD + size > os.fstat(fd).st_size:
                raise ValueError(self.path)
            form, index, stamps, path = marshal.loads(read_at(fd, size, _HEAD))
            if form != FORMAT or not isinstance(index, dict) or not isinstance(stamps, dict):
                raise ValueError(self.path)
        except (OSError, EOFError, ValueError, TypeError):  # damaged or another format: imported as always
            os.close(fd)
            return
        self._fd, self._index, self._stamps, self._base = fd, index, stamps, _HEAD + size
        self._path_ok = path == sys.path

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _unchanged(self, folder: str) -> bool:
        known = self._seen.get(folder)
        if known is None:
            known = self._seen[folder] = folder in self._stamps and folder_stamp(folder) == self._stamps[folder]
        return known

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: object = None) -> ModuleSpec | None:
        entry = self._index.get(name)
        if entry is None or self._fd is None:
            return None
        origin, package = entry[0], entry[1]
        own = os.path.dirname(origin)
        where = os.path.dirname(own) if package else own
        if path is None:  # top-level: the first `sys.path` entry that holds it, all before it unchanged
            if not self._path_ok or not self._first_on_sys_path(where):
                return None
        elif where not in path or not self._unchanged(where):
            return None
        if package and not self._unchanged(own):
            return None
        try:
            st = os.stat(origin)
        except OSError:
            return None
        if st.st_mtime_ns != entry[2] or st.st_size != entry[3]:
            return None
        spec = ModuleSpec(name, TableLoader(name, origin, self), origin=origin, is_package=package)
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [own]
        return spec

    def _first_on_sys_path(self, where: str) -> bool:
        for entry in sys.path:
            if not self._unchanged(entry):
                return False
            if entry == where:
                return True
        return False

    def code(self, name: str, origin: str) -> Any:
        """The module's code from the table (None: not there, or it cannot be read)."""
        entry = self._index.get(name)
        if entry is None or entry[0] != origin or self._fd is None:
            return None
        try:
            code = marshal.loads(read_at(self._fd, entry[5], self._base + entry[4]))
        except (OSError, EOFError, ValueError, TypeError):
            return None
        self.served += 1
        return code

    def _still_valid(self, name: str) -> bool:
        """Whether the table's entry `name` would be served as it is (for a save that keeps it)."""
        origin, package, mtime_ns, size = self._index[name][:4]
        own = os.path.dirname(origin)
        where = os.path.dirname(own) if package else own
        if "." not in name and not (self._path_ok and self._first_on_sys_path(where)):
            return False
        if not self._unchanged(where) or not self._unchanged(own):
            return False
        try:
            st = os.stat(origin)
        except OSError:
            return False
        return st.st_mtime_ns == mtime_ns and st.st_size == size

    def save(self) -> bool:
        """Write the table where this process imported a module the usual way and the file may be
        written: the modules it imported from source files, and the table's others that still hold
        (another command's: a kind of process's commands differ); whether it was written. A table
        that writes serves no more imports (its process is ending)."""
        modules = servable(sys.modules)
        fresh = {name: spec for name, spec in modules.items() if not isinstance(spec.loader, TableLoader)}
        if fresh.keys() <= self._before or not may_write() or sys.path != self._start_path or not _writable(self.path.parent):
            return False
        stamps: dict[str, int | None] = {entry: folder_stamp(entry) for entry in sys.path}
        rows: list[tuple[str, tuple[str, bool, int, int], bytes]] = []
        for name, spec in sorted(modules.items()):
            row = self._fresh_row(spec, stamps) if name in fresh else self._kept_row(name, stamps)
            if row is not None:
                rows.append((name, *row))
        if len(rows) < MAX_MODULES:
            rows += [(name, *row) for name in sorted(self._index.keys() - modules.keys()) if (row := self._kept_row(name, stamps)) is not None]
        index: dict[str, Entry] = {}
        offset = 0
        for name, (origin, package, mtime_ns, size), data in rows[:MAX_MODULES]:
            index[name] = (origin, package, mtime_ns, size, offset, len(data))
            offset += len(data)
        head = marshal.dumps((FORMAT, index, stamps, list(sys.path)))
        self.close()  # serves nothing more: Windows replaces no file a process holds open, this one included
        return replace_file(self.path, [len(head).to_bytes(_HEAD, "little"), head, *(data for *_, data in rows[:MAX_MODULES])])

    def _fresh_row(self, spec: ModuleSpec, stamps: dict[str, int | None]) -> tuple[tuple[str, bool, int, int], bytes] | None:
        """A module imported the usual way, as the table keeps it (None: its file is gone or changed)."""
        origin = spec.origin
        assert origin is not None  # `servable`
        try:
            before = os.stat(origin)
            data = marshal.dumps(spec.loader.get_code(spec.name))  # type: ignore[union-attr]  # a SourceFileLoader
        except (OSError, ValueError, ImportError, SyntaxError):
            return None
        package = spec.submodule_search_locations is not None
        _stamp_folders(stamps, origin, package)
        return (origin, package, before.st_mtime_ns, before.st_size), data

    def _kept_row(self, name: str, stamps: dict[str, int | None]) -> tuple[tuple[str, bool, int, int], bytes] | None:
        """The table's own entry, where it still holds (None: it does not, or cannot be read)."""
        if self._fd is None or name not in self._index or not self._still_valid(name):
            return None
        entry = self._index[name]
        try:
            data = read_at(self._fd, entry[5], self._base + entry[4])
        except OSError:
            return None
        _stamp_folders(stamps, entry[0], entry[1])
        return entry[:4], data


def _stamp_folders(stamps: dict[str, int | None], origin: str, package: bool) -> None:
    """Note the modification time of the folders a module's finding depends on: its own, and a package's parent."""
    own = os.path.dirname(origin)
    for folder in (own, os.path.dirname(own)) if package else (own,):
        if folder not in stamps:
            stamps[folder] = folder_stamp(folder)


def servable(modules: dict[str, Any]) -> dict[str, ModuleSpec]:
    """The modules a table can serve: imported from a source file by Python's source loader (or the table's)."""
    out: dict[str, ModuleSpec] = {}
    for name, module in list(modules.items()):
        spec = getattr(module, "__spec__", None)
        if spec is not None and type(spec.loader) in (SourceFileLoader, TableLoader) and spec.origin and spec.name == name:
            out[name] = spec
    return out


def _writable(folder: Path) -> bool:
    """Whether the table's folder can be written (asked first: a read-only install would otherwise make
    every process marshal its modules' code for a file it then cannot write)."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    return existing is not None and os.access(existing, os.W_OK)


_INSTALLED: list[ModuleCode] = []


def install(path: Path | None = None, role: str = "") -> ModuleCode | None:
    """Serve this process's imports from the table in `path` (`default_path(role)`), just before Python's
    path finder on `sys.meta_path`; idempotent. None (nothing installed) in a frozen build, and where
    there is no table and none may be written."""
    if _INSTALLED:
        return _INSTALLED[0]
    path = default_path(role) if path is None else path
    if getattr(sys, "frozen", False) or not (may_write() or path.exists()):
        return None
    table = ModuleCode(path)
    finders = sys.meta_path
    at = next((i for i, finder in enumerate(finders) if finder is PathFinder), len(finders))
    finders.insert(at, table)  # a finder by protocol (`find_spec`)
    _INSTALLED.append(table)
    return table


def save() -> None:
    """Write the table, if this process imported something the usual way and it may be written."""
    for table in _INSTALLED:
        table.save()


def uninstall() -> None:
    """Stop serving imports from the table (tests)."""
    while _INSTALLED:
        table = _INSTALLED.pop()
        if table in sys.meta_path:
            sys.meta_path.remove(table)
        table.close()
