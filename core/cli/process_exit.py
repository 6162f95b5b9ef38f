"""How the `cairn` process itself ends after a command: at once where nothing waits for the exit.

Tearing the interpreter down frees every object and module one by one and runs the cycle
collector over what is left: ~40 ms of a ~0.3 s cold keyword search, 0.06-0.13 s after
`cairn index --no-embed` had printed its result (6-8 % of a small vault's whole run). Both
have written, fsynced and closed everything by then (the build worker and the extractor's
child are stopped, the vault lock goes with the process), so their process ends with
`os._exit` once the output is flushed. Only `core.cli.main.entry`, the `cairn` command
itself, decides so: a test or script calling `main` keeps its interpreter.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import NoReturn


def ends_at_once(args: argparse.Namespace) -> bool:
    """Whether the command leaves nothing for the interpreter's exit: a search, a keyword-only index."""
    return args.command == "search" or (args.command == "index" and bool(getattr(args, "no_embed", False)))


def exit_now(code: int) -> NoReturn:
    """End the process without the interpreter's teardown; only the output is flushed (atexit hooks are skipped)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`cairn index | head`): nothing more to say
            pass
    os._exit(code)


def quiet_collector() -> None:
    """Before a search in its own process: no cyclic collector passes.

    The collector's passes over every object a search's ~300 modules' imports make cost ~30 ms
    of a process that lives a fraction of a second; reference counting frees all but a
    search's few cycles, which the exit reclaims.
    """
    gc.disable()


def skip_final_collections() -> None:
    """After a search in its own process: should it still exit the usual way, the shutdown skips today's objects.

    Python's shutdown runs the cycle collector over everything still alive, several times while
    it clears the modules: at 10k notes a hybrid search's numpy, vectors and vocabulary cost it
    ~60 ms (a keyword search's ~25 ms), for memory the OS takes back at once. Frozen objects are
    skipped; everything else about the exit (flushing, atexit, joining threads) stays as it was.
    """
    gc.freeze()
