"""`import_lean`: stand-ins only during the import, and only while no other thread could keep one."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.lean_import import import_lean

PROBE = "cairn_lean_probe"  # a module that records, when imported, what `cairn_lean_extra` was
EXTRA = "cairn_lean_extra"  # the module a library imports but never uses


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / f"{PROBE}.py").write_text(
        f"import sys\nSEEN = getattr(sys.modules.get({EXTRA!r}), 'marker', None)\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in (PROBE, EXTRA):
        sys.modules.pop(name, None)


def stand_in() -> dict[str, object]:
    return {EXTRA: {"marker": lambda: "stand-in"}}


ALONE = f"""
import sys
sys.path.insert(0, sys.argv[1])
from core.base.lean_import import import_lean
import_lean({{{EXTRA!r}: {{"marker": print}}}}, {PROBE!r})
print(sys.modules[{PROBE!r}].SEEN is not None, {EXTRA!r} in sys.modules)
"""


def test_the_stand_in_is_there_during_the_import_only(probe: None, tmp_path: Path) -> None:
    # In a fresh process: the test run's own threads (servers, watchers of earlier tests) would turn it off.
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", ALONE, str(tmp_path)], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
    assert done.stdout.split() == ["True", "False"]  # the library saw the stand-in, and nobody after it


def test_with_another_thread_alive_the_library_is_imported_as_it_is(probe: None) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        import_lean(stand_in(), PROBE)  # type: ignore[arg-type]
    finally:
        release.set()
        other.join(5)
    assert sys.modules[PROBE].SEEN is None  # no stand-in another thread could have taken for the real module
    assert EXTRA not in sys.modules


KNOWN_THREAD = f"""
import sys
import threading
sys.path.insert(0, sys.argv[1])
from core.base.lean_import import import_lean, imports_no_stand_in
release = threading.Event()
other = imports_no_stand_in(threading.Thread(target=release.wait, daemon=True))
other.start()
import_lean({{{EXTRA!r}: {{"marker": print}}}}, {PROBE!r})
release.set()
other.join(5)
print(sys.modules[{PROBE!r}].SEEN is not None, {EXTRA!r} in sys.modules)
"""


def test_a_thread_known_to_import_none_of_them_keeps_the_import_lean(probe: None, tmp_path: Path) -> None:
    # In a fresh process, as above: a thread left by an earlier test would rightly turn it off.
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", KNOWN_THREAD, str(tmp_path)], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
    assert done.stdout.split() == ["True", "False"]  # the library saw the stand-in, and nobody after it


SHUTIL = """
import json, sys
LEAN = sys.argv[1] == "lean"
if LEAN:
    from core.base.lean_import import import_shutil_lean
    import_shutil_lean()
import shutil
loaded = sorted(m for m in ("bz2", "lzma", "_bz2", "_lzma", "_compression") if m in sys.modules)
verdict = [shutil._BZ2_SUPPORTED, shutil._LZMA_SUPPORTED, sorted(shutil.get_unpack_formats()), sorted(shutil.get_archive_formats())]
import bz2, lzma
real = [bz2.BZ2File.__module__, lzma.LZMAFile.__module__, bz2.decompress(bz2.compress(b"x")).decode()]
print(json.dumps([loaded, verdict, real]))
"""


def test_shutil_imported_lean_probes_bz2_and_lzma_without_loading_them() -> None:
    """The same archive formats as a plain `import shutil`, none of the two modules loaded, and the real
    ones for whoever imports them afterwards."""
    repo = Path(__file__).resolve().parents[3]
    runs = {
        mode: subprocess.run([sys.executable, "-c", SHUTIL, mode], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
        for mode in ("lean", "plain")
    }
    (lean_loaded, lean_verdict, lean_real), (plain_loaded, plain_verdict, plain_real) = (
        json.loads(runs[mode].stdout) for mode in ("lean", "plain")
    )
    assert lean_loaded == [] and set(plain_loaded) >= {"bz2", "lzma"}
    assert lean_verdict == plain_verdict
    assert lean_real == plain_real == ["bz2", "lzma", "x"]


def test_filelocks_stand_ins_cover_every_use_of_secrets_and_platform_in_the_installed_package() -> None:
    """A use the stand-ins lacked would fail only on the rare path that reaches it (a stale soft lock's break)."""
    import filelock

    from core.base.lean_import import FILELOCK_STAND_INS

    used: dict[str, set[str]] = {name: set() for name in ("secrets", "platform", "decimal")}  # logging: see the test below
    for path in Path(filelock.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in used:
                used[node.module].update(alias.name for alias in node.names)  # `from secrets import x` would bypass the module
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in used:
                used[node.value.id].add(node.attr)
    assert used["secrets"] and used["platform"] and used["decimal"]  # the scan sees the package's uses
    for module, names in used.items():
        assert names <= set(FILELOCK_STAND_INS[module]), (module, names - set(FILELOCK_STAND_INS[module]))


FILELOCK = """
import json, sys
from core.base.lean_import import import_filelock_lean
import_filelock_lean()
import filelock, filelock._util
loaded = sorted(m for m in ("secrets", "platform", "hmac", "base64", "decimal") if m in sys.modules)
lock = filelock.FileLock(sys.argv[1], thread_local=False, timeout=2.5)
with lock:
    held = lock.is_locked
other = filelock.FileLock(sys.argv[1], timeout=0)
other.acquire()
other.release()
import platform, secrets
calls = [filelock._util.platform.machine() == platform.machine(), len(filelock._util.secrets.token_hex(16)),
         0 <= filelock._api.secrets.randbelow(10) < 10, secrets.token_bytes.__module__]
from decimal import Decimal  # a timeout given as a Decimal, once something has imported decimal: checked as before
refused = []
for timeout in (Decimal("0.5"), Decimal("sNaN"), "1", True):
    try:
        filelock.FileLock(sys.argv[1] + "2", timeout=timeout).acquire(timeout=timeout)
    except (TypeError, ValueError) as error:
        refused.append(type(error).__name__)
print(json.dumps([loaded, held, lock.is_locked, calls, refused]))
"""


def test_filelock_imported_lean_locks_as_before_without_secrets_and_platform(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", FILELOCK, str(tmp_path / "x.lock")], capture_output=True, text=True, cwd=repo, timeout=60, check=True
    )
    loaded, held, still_held, calls, refused = json.loads(done.stdout)
    assert loaded == [] and held is True and still_held is False
    assert calls == [True, 32, True, "secrets"]  # the stand-ins hand on to the real functions; later imports are real
    assert refused == ["ValueError", "TypeError", "TypeError"]  # a Decimal is taken, a signalling NaN, a string, a bool are not


LOADED_LEAN = """
import json, sys
from core.base.lean_import import import_filelock_lean
import_filelock_lean()
print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items() if n.split(".")[0] == "filelock")))
"""


def _outside_annotations(tree: ast.AST) -> list[ast.AST]:
    """The tree's nodes, annotations left out (filelock's `from __future__ import annotations` keeps them text)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        notes = [getattr(node, "annotation", None), getattr(node, "returns", None)]
        for note in notes:
            if note is not None:
                skip.update(id(inner) for inner in ast.walk(note))
    return [node for node in ast.walk(tree) if id(node) not in skip]


def test_the_modules_filelock_loads_with_the_stand_ins_use_nothing_of_logging_but_getlogger() -> None:
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", LOADED_LEAN], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
    used: set[str] = set()
    for path in json.loads(done.stdout):
        for node in _outside_annotations(ast.parse(Path(path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "logging":
                used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "logging":
                used.add(node.attr)
    assert used == {"getLogger"}


LOGGED = """
import json, sys
from core.base.lean_import import import_filelock_lean
import_filelock_lean()
import filelock
lock = filelock.FileLock(sys.argv[1])
with lock:
    pass
quiet = "logging" not in sys.modules
import logging
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append([record.levelname, record.getMessage().replace(sys.argv[1], "LOCK"), record.pathname.endswith("_api.py")])
logging.getLogger("filelock").addHandler(Keep())
logging.getLogger("filelock").setLevel(logging.DEBUG)
with lock:
    pass
filelock._api._LOGGER.warning("told %s", "always")
print(json.dumps([quiet, records]))
"""


def test_filelocks_logger_is_quiet_until_logging_is_imported_then_the_real_one(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-c", LOGGED, str(tmp_path / "x.lock")], capture_output=True, text=True, cwd=repo, timeout=60, check=True
    )
    quiet, records = json.loads(done.stdout)
    assert quiet is True  # nothing could have shown a DEBUG record: logging was never imported
    levels = [level for level, _, _ in records]
    assert levels.count("DEBUG") >= 2 and levels[-1] == "WARNING"
    assert any("acquired on LOCK" in message for _, message, _ in records)
    assert any("released on LOCK" in message for _, message, _ in records)
    assert all(at_api for _, _, at_api in records[:-1])  # filelock's own line, not the stand-in's, is the origin


ONCE_LOADED = """
import json, sys
from core.base.lean_import import class_once_loaded
Decimal = class_once_loaded("decimal", "Decimal")
before = [isinstance(x, Decimal) for x in (1, 2.5, "3", None)] + ["decimal" in sys.modules]
import decimal
after = [isinstance(decimal.Decimal("1.5"), Decimal), isinstance(1.5, Decimal), isinstance(decimal.Decimal(1), (int, Decimal))]
made = Decimal("1.25") * 4
print(json.dumps([before, after, type(made).__module__, str(made), Decimal.__name__]))
"""


def test_a_class_once_loaded_answers_no_until_its_module_is_loaded_then_as_the_real_class() -> None:
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", ONCE_LOADED], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
    before, after, module, made, name = json.loads(done.stdout)
    assert before == [False, False, False, False, False]  # nothing can be a Decimal yet: no check imported decimal
    assert after == [True, False, True]
    assert (module, made, name) == ("decimal", "5.00", "Decimal")  # a call makes the real thing


ARGPARSE = """
import json, os, sys
from core.base.lean_import import import_argparse_lean
prefix = os.path.join(sys.argv[2], sys.argv[1])  # a prefix of its own for each flavour
if sys.argv[1] == "catalogs":  # a catalog folder, as a system Python has: every message goes through gettext
    os.makedirs(os.path.join(prefix, "share", "locale"), exist_ok=True)
sys.base_prefix = prefix
import_argparse_lean()
import argparse
parser = argparse.ArgumentParser(prog="cairn")
parser.add_argument("--vault", required=True)
usage = parser.format_help()
loaded = sorted(m for m in ("gettext", "locale") if m in sys.modules)
import gettext
one, many = "expected %s argument", "expected %s arguments"
real = [gettext.gettext("usage: "), gettext.ngettext(one, many, 1), gettext.ngettext(one, many, 3)]
mine = [argparse._("usage: "), argparse.ngettext(one, many, 1), argparse.ngettext(one, many, 3)]
print(json.dumps([loaded, usage, real == mine, argparse._.__module__]))
"""


@pytest.mark.parametrize("where", ["none", "catalogs"])
def test_argparse_translates_through_gettext_only_where_a_catalog_can_exist(where: str, tmp_path: Path) -> None:
    """Without a `<prefix>/share/locale` folder no catalog can translate argparse's words: they are its own,
    without `gettext` and `locale` loaded; with one, each goes through the real `gettext` (loaded then)."""
    repo = Path(__file__).resolve().parents[3]
    runs = {
        flavour: subprocess.run([sys.executable, "-c", ARGPARSE, flavour, str(tmp_path)], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
        for flavour in (where, "none")
    }
    loaded, usage, same, module = json.loads(runs[where].stdout)
    plain_usage = json.loads(runs["none"].stdout)[1]
    assert same and module == "core.base.lean_import" and usage == plain_usage
    assert loaded == ([] if where == "none" else ["gettext", "locale"])


INSPECT = """
import json, pathlib, sys
from core.base import dataclass_code
dataclass_code.install(pathlib.Path(sys.argv[1]))
import dataclasses, inspect
loaded = sorted(m for m in ("ast", "_ast", "tokenize", "dis", "opcode") if m in sys.modules)
import traceback  # (its linecache imports the real tokenize)

@dataclasses.dataclass
class Point:
    x: int
    y: int = 0

source = inspect.getsource(Point)  # inspect's `_ClassFinder` walks the module's tree (ast) it read (tokenize)
signature = str(inspect.signature(len))  # a builtin's: parsed from its text signature with ast
try:
    raise ValueError("shown")
except ValueError:
    shown = traceback.format_exc()  # the failing line, read through linecache (tokenize)
import ast, dis
flags = {name: getattr(inspect, name) for name in dir(inspect) if name.startswith("CO_")}
real_flags = {"CO_" + v: k for k, v in dis.COMPILER_FLAG_NAMES.items()}

async def nap():
    pass

frame = inspect.getframeinfo(sys._getframe())  # positions of the frame's instruction (dis)
print(json.dumps([loaded, source.splitlines()[1:3], Point.__doc__, signature, "raise ValueError" in shown,
                  inspect.ast.parse("x = 1").body[0].__class__ is ast.Assign, flags == real_flags,
                  inspect.iscoroutinefunction(nap), frame.positions is not None]))
"""


def test_inspect_without_ast_and_tokenize_still_reads_source_signatures_and_tracebacks(tmp_path: Path) -> None:
    """`dataclasses` (with it `inspect`) imported without `ast`, `tokenize` and `dis`: none is loaded by making
    dataclasses, and everything of inspect's that reads source or bytecode still works, on the real modules."""
    repo = Path(__file__).resolve().parents[3]
    script = tmp_path / "probe.py"
    script.write_text(INSPECT, encoding="utf-8")  # a file: getsource needs the class's source on disk
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "table")], capture_output=True, text=True, cwd=repo, timeout=60, check=True, env=env)
    loaded, source, doc, signature, shown, parsed, flags, coroutine, positions = json.loads(done.stdout)
    assert loaded == ([] if sys.version_info[:2] == (3, 11) else ["dis", "opcode"])  # `dis` stood in on 3.11 only
    assert source == ["class Point:", "    x: int"] and doc == "Point(x: int, y: int = 0)"
    assert signature == "(obj, /)" and shown and parsed
    assert flags and coroutine and positions  # inspect's CO_* names as `dis` would have made them


USED_EARLY = f"""
import sys
sys.path.insert(0, sys.argv[1])
from core.base.lean_import import import_lean, module_on_first_use
import_lean({{"tokenize": module_on_first_use("tokenize")}}, {PROBE!r})
import tokenize
print(sys.modules[{PROBE!r}].SEEN, type(sys.modules[{PROBE!r}].tokenize).__name__, sys.modules[{PROBE!r}].tokenize is tokenize)
"""


def test_a_module_stood_in_until_used_and_used_during_the_import_is_the_real_one(tmp_path: Path) -> None:
    (tmp_path / f"{PROBE}.py").write_text("import tokenize\nSEEN = tokenize.NAME\n", encoding="utf-8")  # used at once
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", USED_EARLY, str(tmp_path)], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
    import token

    assert done.stdout.split() == [str(token.NAME), "module", "False"]  # the value is the real one; the module object stays the stand-in


def test_the_compiler_flag_table_is_this_pythons() -> None:
    import dis

    from core.base.lean_import import COMPILER_FLAG_NAMES_311, INSPECT_STAND_INS

    if sys.version_info[:2] == (3, 11):
        assert COMPILER_FLAG_NAMES_311 == dis.COMPILER_FLAG_NAMES
        assert INSPECT_STAND_INS["dis"]["COMPILER_FLAG_NAMES"] == dis.COMPILER_FLAG_NAMES
    else:
        assert "dis" not in INSPECT_STAND_INS


LATER_USE = f"""
import hashlib as real_hashlib
import sys
del sys.modules["hashlib"]
sys.path.insert(0, sys.argv[1])
from core.base.lean_import import import_lean, module_on_first_use
import_lean({{"hashlib": module_on_first_use("hashlib", md5=print)}}, {PROBE!r})
probe = sys.modules[{PROBE!r}]
print(probe.SEEN is print, probe.hashlib.sha256(b"x").hexdigest() == real_hashlib.sha256(b"x").hexdigest(), "__path__" in dir(probe.hashlib))
"""


def test_a_module_stood_in_until_used_hands_on_what_it_does_not_keep(tmp_path: Path) -> None:
    """Kept names are the stand-in's; `from m import name` does not load the real module (the import system's
    `__path__` probe is answered no); any other name, asked for later, is the real module's."""
    (tmp_path / f"{PROBE}.py").write_text("import hashlib\nfrom hashlib import md5\nSEEN = md5\n", encoding="utf-8")
    repo = Path(__file__).resolve().parents[3]
    done = subprocess.run([sys.executable, "-c", LATER_USE, str(tmp_path)], capture_output=True, text=True, cwd=repo, timeout=60, check=True)
    assert done.stdout.split() == ["True", "True", "False"]
