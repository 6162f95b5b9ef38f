"""The real `cairn` CLI run in a fresh interpreter that reports what it imported (shared by the start-up tests).

`cairn index --no-embed` and `cairn search` end with `os._exit` (core.cli.process_exit); in the
probe it raises instead, so the script can report after the command: its exit code, which of
the watched modules ended up in `sys.modules`, and whether the collector's heap was frozen.
"""

from __future__ import annotations

PROBE_TEMPLATE = """
import gc, json, os, runpy, sys
sys.argv = ["cairn", *sys.argv[1:]]
code = 0
def _exit(status):
    raise SystemExit(status)
os._exit = _exit
try:
    runpy.run_module("core.cli.main", run_name="__main__")
except SystemExit as exc:
    code = exc.code
watched = WATCHED_NAMES
loaded = sorted(m for m in watched if m in sys.modules)
print(json.dumps({"code": code, "loaded": loaded, "frozen": gc.get_freeze_count() > 0}), file=sys.stderr)
"""


def probe_script(watched: tuple[str, ...]) -> str:
    """Source for `python -c` that runs the CLI with its own argv and reports on `watched` modules (last stderr line, JSON)."""
    return PROBE_TEMPLATE.replace("WATCHED_NAMES", repr(watched))
