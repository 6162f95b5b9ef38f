"""The engine never imports Qt: every `core` module loads without PySide6 (STYLE.md §1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import importlib, json, pkgutil, sys
import core
names = ["core"]
for info in pkgutil.walk_packages(core.__path__, "core."):
    names.append(info.name)
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "qt": sorted(m for m in sys.modules if m.split(".")[0].startswith("PySide6"))}))
"""


def test_importing_every_core_module_loads_no_pyside6() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "core.engine" in result["modules"] and "core.cli.main" in result["modules"]
    assert len(result["modules"]) > 20
    assert result["qt"] == []
