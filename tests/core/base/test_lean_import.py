"""`import_lean`: stand-ins only during the import, and only while no other thread could keep one."""

from __future__ import annotations

import json
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
