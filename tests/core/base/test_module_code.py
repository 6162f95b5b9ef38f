"""The module table: modules it serves are the modules Python imports, and where anything that decides
the import changed, Python imports them as always."""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import itertools
import marshal
import os
import sys
from collections.abc import Iterator
from importlib.machinery import PathFinder, SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

from core.base import module_code
from core.base.module_code import ModuleCode, TableLoader

_names = itertools.count()


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A folder on `sys.path` holding a package `cmpkgN` (a module, a sub-package, a data file) and a
    top-level module `cmtopN`; whatever a test imported of them is forgotten after it."""
    name = f"cmpkg{next(_names)}"
    root = tmp_path / "site"
    pkg = root / name
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""A package."""\nVALUE = 1\n', encoding="utf-8")
    (pkg / "mod.py").write_text(
        '"""A module."""\n\n\ndef double(x):\n    """Twice x."""\n    return 2 * x\n\n\nclass Thing:\n    kind = "thing"\n', encoding="utf-8"
    )
    (pkg / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "sub" / "deep.py").write_text("WHERE = 'deep'\n", encoding="utf-8")
    (pkg / "data.txt").write_text("resource text", encoding="utf-8")
    (root / f"cmtop_{name}.py").write_text("TOP = True\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(root), *sys.path])
    monkeypatch.setattr(module_code, "may_write", lambda: True)
    importlib.invalidate_caches()
    try:
        yield root, name
    finally:
        module_code.uninstall()
        for mod in [m for m in sys.modules if m.startswith((name, f"cmtop_{name}"))]:
            del sys.modules[mod]
        importlib.invalidate_caches()


def where(mod: ModuleType) -> tuple[object, ...]:
    """What the import system says of where `mod` is: its file, its bytecode file, its spec's origin, parent and folders."""
    spec = mod.__spec__
    assert spec is not None
    return mod.__file__, mod.__cached__, spec.origin, spec.submodule_search_locations, spec.parent


def modules_of(name: str) -> list[str]:
    return [name, f"{name}.mod", f"{name}.sub", f"{name}.sub.deep", f"cmtop_{name}"]


def forget(name: str) -> None:
    for mod in [m for m in sys.modules if m.startswith((name, f"cmtop_{name}"))]:
        del sys.modules[mod]
    importlib.invalidate_caches()


def written_table(tmp_path: Path, name: str) -> Path:
    """A table written by a process that imported the place's modules the usual way."""
    table = tmp_path / "table.marshal"
    module_code.install(table)
    for mod in modules_of(name):
        importlib.import_module(mod)
    assert module_code._INSTALLED[0].save()
    module_code.uninstall()
    forget(name)
    return table


def test_a_module_served_from_the_table_is_the_module_python_imports(tmp_path: Path, place: tuple[Path, str]) -> None:
    _, name = place
    usual = {m: importlib.import_module(m) for m in modules_of(name)}
    expected = {m: where(mod) for m, mod in usual.items()}
    codes = {m: SourceFileLoader(m, str(mod.__file__)).get_code(m) for m, mod in usual.items()}
    forget(name)
    table = written_table(tmp_path, name)

    served = module_code.install(table)
    assert served is not None
    got = {m: importlib.import_module(m) for m in modules_of(name)}
    for m, mod in got.items():
        assert isinstance(mod.__loader__, TableLoader) and isinstance(mod.__loader__, SourceFileLoader)
        assert where(mod) == expected[m]
        assert mod.__loader__.get_code(m) == codes[m]  # code objects compare by their bytecode, constants and names
    assert served.served >= len(modules_of(name))
    mod = got[f"{name}.mod"]
    assert mod.double(21) == 42 and mod.Thing.kind == "thing" and mod.double.__doc__ == "Twice x."
    assert "return 2 * x" in inspect.getsource(mod.double)
    assert importlib.resources.files(name).joinpath("data.txt").read_text(encoding="utf-8") == "resource text"


def test_a_changed_source_is_imported_as_always(tmp_path: Path, place: tuple[Path, str]) -> None:
    root, name = place
    table = written_table(tmp_path, name)
    (root / name / "mod.py").write_text("def double(x):\n    return 3 * x\n", encoding="utf-8")
    served = module_code.install(table)
    assert served is not None
    mod = importlib.import_module(f"{name}.mod")
    assert type(mod.__loader__) is SourceFileLoader
    assert mod.double(2) == 6
    assert isinstance(importlib.import_module(f"{name}.sub.deep").__loader__, TableLoader)  # its own folder did not change


def test_a_file_added_to_a_folder_stops_the_table_there(tmp_path: Path, place: tuple[Path, str]) -> None:
    """A new file could be what the search finds first (a package beside a module of its name, say)."""
    root, name = place
    table = written_table(tmp_path, name)
    (root / name / "extra.py").write_text("", encoding="utf-8")
    folder = root / name
    os.utime(folder, ns=(folder.stat().st_atime_ns, folder.stat().st_mtime_ns + 1_000_000_000))  # a coarse clock would not tell
    module_code.install(table)
    assert type(importlib.import_module(f"{name}.mod").__loader__) is SourceFileLoader
    assert isinstance(importlib.import_module(f"{name}.sub.deep").__loader__, TableLoader)


def test_a_top_level_module_shadowed_earlier_on_sys_path_is_imported_as_always(
    tmp_path: Path, place: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, name = place
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    monkeypatch.setattr(sys, "path", [str(earlier), *sys.path])
    table = written_table(tmp_path, name)
    (earlier / f"cmtop_{name}.py").write_text("TOP = 'shadow'\n", encoding="utf-8")
    os.utime(earlier, ns=(earlier.stat().st_atime_ns, earlier.stat().st_mtime_ns + 1_000_000_000))
    module_code.install(table)
    top = importlib.import_module(f"cmtop_{name}")
    assert top.TOP == "shadow" and type(top.__loader__) is SourceFileLoader


def test_another_sys_path_serves_no_top_level_module(tmp_path: Path, place: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, name = place
    table = written_table(tmp_path, name)
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    module_code.install(table)
    assert type(importlib.import_module(name).__loader__) is SourceFileLoader
    assert isinstance(importlib.import_module(f"{name}.mod").__loader__, TableLoader)  # found in its package's folder


def test_a_damaged_or_missing_table_serves_nothing(tmp_path: Path, place: tuple[Path, str]) -> None:
    _, name = place
    for content in (b"", b"\x10\x00\x00\x00\x00\x00\x00\x00not marshal at all", marshal.dumps({"a": 1})):
        table = tmp_path / "damaged.marshal"
        table.write_bytes(content)
        served = module_code.install(table)
        assert served is not None
        assert type(importlib.import_module(f"{name}.mod").__loader__) is SourceFileLoader
        module_code.uninstall()
        forget(name)
    assert ModuleCode(tmp_path / "missing.marshal").find_spec(f"{name}.mod", None) is None


def test_the_table_is_asked_just_before_pythons_path_finder(tmp_path: Path, place: tuple[Path, str]) -> None:
    table = module_code.install(tmp_path / "table.marshal")
    finders = sys.meta_path
    assert finders.index(table) + 1 == finders.index(PathFinder)  # type: ignore[arg-type]


def test_a_save_keeps_what_other_commands_imported(tmp_path: Path, place: tuple[Path, str]) -> None:
    _, name = place
    table = tmp_path / "table.marshal"
    module_code.install(table)
    importlib.import_module(f"{name}.sub.deep")
    assert module_code._INSTALLED[0].save()
    module_code.uninstall()
    forget(name)
    module_code.install(table)
    importlib.import_module(f"{name}.mod")  # another command: another module
    assert module_code._INSTALLED[0].save()
    module_code.uninstall()
    forget(name)
    module_code.install(table)
    assert isinstance(importlib.import_module(f"{name}.sub.deep").__loader__, TableLoader)
    assert isinstance(importlib.import_module(f"{name}.mod").__loader__, TableLoader)
    assert not module_code._INSTALLED[0].save()  # nothing new: not written again


def test_nothing_is_written_where_bytecode_may_not_be(tmp_path: Path, place: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, name = place
    monkeypatch.setattr(module_code, "may_write", lambda: False)
    table = tmp_path / "table.marshal"
    assert module_code.install(table) is None  # no table, and none may be written: Python's own way
    module_code.uninstall()
    table.write_bytes(b"")
    module_code.install(table)
    importlib.import_module(f"{name}.mod")
    assert not module_code._INSTALLED[0].save()
    assert table.read_bytes() == b""


def test_where_the_system_has_no_pread_the_table_is_read_by_seek(tmp_path: Path, place: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, name = place
    table = written_table(tmp_path, name)
    monkeypatch.delattr(os, "pread")  # Windows
    module_code.install(table)
    mod = importlib.import_module(f"{name}.mod")
    assert isinstance(mod.__loader__, TableLoader) and mod.double(4) == 8


def test_a_process_that_changed_sys_path_writes_no_table(tmp_path: Path, place: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The next process starts from the path this one started with: a table written for another would not serve it."""
    _, name = place
    table = tmp_path / "table.marshal"
    module_code.install(table)
    importlib.import_module(f"{name}.mod")
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert not module_code._INSTALLED[0].save()
    assert not table.exists()


def test_a_read_only_folder_is_not_written_to(tmp_path: Path, place: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, name = place
    table = tmp_path / "ro" / "table.marshal"
    module_code.install(table)
    importlib.import_module(f"{name}.mod")
    monkeypatch.setattr(module_code.os, "access", lambda path, mode: False)  # root writes anywhere: the answer a read-only install gives
    monkeypatch.setattr(module_code.marshal, "dumps", lambda *a: pytest.fail("marshalled for a file it cannot write"))
    assert not module_code._INSTALLED[0].save()
    assert not table.exists()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to list open files")
def test_a_table_that_wrote_holds_its_file_no_longer(tmp_path: Path, place: tuple[Path, str]) -> None:
    """Windows replaces no file a process holds open, the writing process's own included."""
    _, name = place
    table = written_table(tmp_path, name)
    module_code.install(table)
    importlib.import_module(f"{name}.mod")
    (place[0] / name / "mod.py").write_text("X = 1\n", encoding="utf-8")  # something to write anew
    importlib.import_module(f"{name}.sub.deep")
    forget(name)
    importlib.import_module(f"{name}.mod")

    fds = Path("/proc/self/fd")
    held = [int(fd) for fd in os.listdir(fds) if os.path.realpath(fds / fd) == str(table.resolve())]
    assert held
    assert module_code._INSTALLED[0].save()
    for fd in held:  # closed: the same numbers name no file now (the replaced file's name would not tell)
        with pytest.raises(OSError):
            os.fstat(fd)
