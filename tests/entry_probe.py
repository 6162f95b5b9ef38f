"""The `cairn` command or the build's worker (its entry, `spare_core.run_target`) run in a new process
on a one-note vault, with bytecode not written (PYTHONDONTWRITEBYTECODE), and a report of what it
installed: how `core.base.dataclass_code` and `core.base.regex_code` are held to their entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ARGVS = [["worker"], ["index", "--vault", "VAULT", "--no-embed", "--quiet"]]  # the worker; a cold index

RUN = """
import json, os, runpy, sys
def _exit(status):
    raise SystemExit(status)
os._exit = _exit
if sys.argv[1] == "worker":
    from core.base.spare_core import run_target
    class Ended:  # the indexing process is gone at once: the worker readies itself and returns
        def recv(self):
            raise EOFError
    run_target(Ended(), "core.index.segment_worker:serve")
else:
    sys.argv = ["cairn", *sys.argv[1:]]
    try:
        runpy.run_module("core.cli.main", run_name="__main__")
    except SystemExit:
        pass
"""


def run_entry(tmp_path: Path, argv: list[str], report: str, *, before: str = "", env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `before`, the entry `argv` names (`ARGVS`), then `report` (which prints one JSON line to stderr); its JSON."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n\nSee [[Plan]] #tag.\n", encoding="utf-8")
    full_env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    argv = [str(vault) if a == "VAULT" else a for a in argv]
    script = "\n".join((before, RUN, report))
    done = subprocess.run([sys.executable, "-c", script, *argv], cwd=REPO, env=full_env, capture_output=True, text=True, timeout=120)
    try:
        return dict(json.loads(done.stderr.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        raise AssertionError(done.stderr) from None
