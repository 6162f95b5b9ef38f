"""Dataclass methods from a table of compiled code (`core.base.dataclass_code`): the same classes, compiled once.

Each test gives `dataclasses` the table's `exec` for its own classes only (monkeypatch), so
the rest of the test process makes its dataclasses as Python does.
"""

from __future__ import annotations

import dataclasses
import inspect
import marshal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from core.base import dataclass_code
from core.base.dataclass_code import MethodCache
from tests.entry_probe import ARGVS, run_entry

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _bytecode_may_be_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in an installed Cairn (a test run may have PYTHONDONTWRITEBYTECODE set)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _make_classes() -> tuple[Any, Any]:
    """A frozen slotted class and a plain one, with defaults, a factory and a class variable."""

    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0
        tags: tuple[str, ...] = ()
        kind: ClassVar[str] = "point"

    @dataclass
    class Bag:
        name: str
        items: list[int] = field(default_factory=list)
        note: str = field(default="", repr=False, compare=False)

    return Point, Bag


def _made_with(cache: MethodCache, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    with monkeypatch.context() as patch:
        patch.setattr(dataclasses, "exec", cache.exec, raising=False)
        return _make_classes()


def test_classes_made_from_the_table_behave_as_classes_compiled_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "methods.marshal"
    first = MethodCache(path)
    _made_with(first, monkeypatch)
    assert first.compiled >= 8  # Point: init, repr, eq, setattr, delattr, hash; Bag: init, repr, eq
    assert first.save() and path.exists()

    second = MethodCache(path)
    point, bag = _made_with(second, monkeypatch)
    assert second.compiled == 0  # every text was in the file
    plain_point, plain_bag = _make_classes()  # as Python makes them

    assert inspect.signature(point) == inspect.signature(plain_point)
    assert inspect.signature(bag) == inspect.signature(plain_bag)
    p = point(1, tags=("a",))
    assert repr(p) == repr(plain_point(1, tags=("a",))).replace("plain_", "") == "_make_classes.<locals>.Point(x=1, y=0, tags=('a',))"
    assert p == point(1, 0, ("a",)) and p != point(2) and hash(p) == hash(point(1, 0, ("a",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3
    assert point.kind == "point" and not hasattr(p, "__dict__")
    b = bag("b")
    assert b.items == [] and b.items is not bag("c").items  # the factory runs per instance
    assert b == bag("b", note="other") and repr(b) == "_make_classes.<locals>.Bag(name='b', items=[])"


def test_a_missing_or_damaged_file_is_an_empty_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for content in (b"", b"not marshal at all", marshal.dumps(["a list"]), marshal.dumps({"text": 3})):
        path = tmp_path / "methods.marshal"
        path.write_bytes(content)
        cache = MethodCache(path)
        assert cache.known == {}
        point, _ = _made_with(cache, monkeypatch)
        assert point(1) == point(1) and cache.compiled > 0
    assert MethodCache(tmp_path / "absent.marshal").known == {}


def test_nothing_is_written_where_bytecode_may_not_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = MethodCache(tmp_path / "methods.marshal")
    _made_with(cache, monkeypatch)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not cache.save() and not (tmp_path / "methods.marshal").exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # a frozen build (PyInstaller sets it)
    assert not cache.save() and not (tmp_path / "methods.marshal").exists()
    monkeypatch.delattr(sys, "frozen")
    (tmp_path / "file").write_text("a file, not a folder")
    blocked = MethodCache(tmp_path / "file" / "methods.marshal")
    _made_with(blocked, monkeypatch)
    assert not blocked.save()  # the process goes on; the next one compiles again
    assert MethodCache(tmp_path / "methods.marshal").save() is False  # nothing new: nothing to write


def test_saving_keeps_what_another_process_wrote_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "methods.marshal"
    mine, theirs = MethodCache(path), MethodCache(path)  # both read the file before either wrote it
    _made_with(mine, monkeypatch)
    theirs.exec("def __create_fn__():\n def f(self):\n  return 1\n return f", {}, {})
    assert theirs.save() and mine.save()
    table = marshal.loads(path.read_bytes())
    assert set(mine.used) < set(table) and set(theirs.used) < set(table)


def test_a_table_grown_past_its_bound_keeps_this_process_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "methods.marshal"
    old = {f"x = {n}": compile(f"x = {n}", "<string>", "exec") for n in range(20)}  # texts of an older release
    path.write_bytes(marshal.dumps(old))
    monkeypatch.setattr(dataclass_code, "MAX_ENTRIES", 10)
    cache = MethodCache(path)
    _made_with(cache, monkeypatch)
    assert cache.save()
    assert set(marshal.loads(path.read_bytes())) == set(cache.used)


def test_the_table_lives_beside_cairns_bytecode_named_for_the_interpreter() -> None:
    path = dataclass_code.default_path()
    assert path.parent == REPO / "core" / "__pycache__"
    assert sys.implementation.cache_tag in path.name


def test_each_kind_of_process_keeps_a_table_of_its_own() -> None:
    """A process loads its whole table at start: the index command's must not carry the app's, the MCP server's
    or the evaluations' dataclasses (one shared file reached ~1,400 texts, 8 ms to load, for ~350 used)."""
    paths = {role: dataclass_code.default_path(role) for role in ("index", "search", "cli", "worker", "app")}
    assert len(set(paths.values())) == len(paths)
    assert all(f".{role}." in path.name and path.parent == REPO / "core" / "__pycache__" for role, path in paths.items())
    assert "index" not in dataclass_code.default_path().name
    with pytest.raises(ValueError, match="unknown table role"):
        dataclass_code.default_path("indexer")


# The `cairn` command and the build's worker (its entry, `spare_core.run_target`) make their
# dataclasses from the table; bytecode is not written here (PYTHONDONTWRITEBYTECODE).
REPORT = """
import dataclasses
from core.base import dataclass_code
cache = dataclass_code._INSTALLED[0] if dataclass_code._INSTALLED else None
installed = cache is not None and getattr(dataclasses.__dict__.get("exec"), "__self__", None) is cache
print(json.dumps({"installed": installed, "used": len(cache.used) if cache else 0, "table": cache.path.name if cache else ""}), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", ARGVS)
def test_the_cairn_command_and_the_worker_use_the_table(tmp_path: Path, argv: list[str]) -> None:
    report = run_entry(tmp_path, argv, REPORT)
    assert report["installed"], report
    assert report["used"] > 20  # ~190 texts in the worker, ~330 in the command
    assert f".{argv[0]}." in report["table"]  # "worker" or "index": the table of its kind of process
