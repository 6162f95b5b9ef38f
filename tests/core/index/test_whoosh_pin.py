"""Whoosh's private parts are reached in one module, and only on the release they were written for."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from core.index.whoosh_pin import PINNED, WhooshVersionError, check_version

REPO = Path(__file__).resolve().parents[3]
#: Whoosh modules whose contents are the storage layer's internals, not its public API.
PRIVATE = tuple(
    f"whoosh.{name}" for name in ("codec", "compat", "filedb", "util", "writing", "reading", "columns", "system", "formats")
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_whoosh_internals_are_imported_in_one_module_only() -> None:
    users = {
        path.relative_to(REPO).as_posix()
        for path in (REPO / "core").rglob("*.py")
        if any(name == p or name.startswith(p + ".") for name in _imports(path) for p in PRIVATE)
    }
    assert users == {"core/index/whoosh_pin.py"}


def test_the_pinned_release_passes_and_any_other_is_refused_by_name() -> None:
    check_version(PINNED)
    for other in ((2, 7, 4), (2, 8, 0), None, "2.7.5"):
        with pytest.raises(WhooshVersionError, match=r"whoosh-reloaded==2\.7\.5"):
            check_version(other)


def test_another_whoosh_fails_at_import_with_the_version_it_needs() -> None:
    code = "import whoosh; whoosh.__version__ = (2, 7, 4); import core.index.keyword_index"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode != 0
    assert "WhooshVersionError" in done.stderr and "whoosh-reloaded==2.7.5" in done.stderr and "2.7.4 is installed" in done.stderr
