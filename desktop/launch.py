"""The `cairn-desktop` / frozen `Cairn` entry point: the app, or its packaged self-check.

`--smoke-test` is dispatched here rather than inside `desktop.app`, because the smoke
test drives the app (it imports `desktop.app`); keeping the choice outside both modules
leaves the import graph one-way.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The app (or its self-check), its regular expressions made from what earlier runs compiled
    (`core.base.regex_code`, as the `cairn` command's are; nothing in a frozen build)."""
    from core.base import regex_code

    regex_code.install(role="app")
    try:
        return _run(list(argv) if argv is not None else sys.argv[1:])
    finally:
        regex_code.save()


def _run(args: list[str]) -> int:
    if "--smoke-test" in args:  # the packaged app checks itself (desktop/smoke.py, packaging/README.md)
        from desktop.smoke import main as smoke_main

        return smoke_main(args)
    from desktop.app import main as app_main

    return app_main(args)
