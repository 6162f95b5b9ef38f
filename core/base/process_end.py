"""Whether this process ends with `os._exit` right after its command, and what it leaves for that end.

`core.cli.main` declares it for the commands `core.cli.process_exit.ends_at_once` names (a search,
a keyword-only index) run as `cairn` itself: their process is torn down by the system, which
takes its memory back at once. Freeing a large structure object by object just before (a
segment writer's posting pool: ~1 ms of the demo's cold index, ~2.4 ms of rust-book's half)
is then work nobody needs, so code that would free one asks `leave` to keep it instead. The
declaration is the declaring process's only: a forked child (the build's worker) does not
inherit it, and the app, the tests and scripts never declare it, so they keep freeing. Only
the last thing left is kept: memory stays bounded by one such structure.
"""

from __future__ import annotations

import os

_declared_by: int | None = None  # the pid that declared it (a forked child has another)
_left: tuple[object, ...] = ()


def declare_exit_at_once() -> None:
    """This process ends with `os._exit` once its command is done (see `core.cli.process_exit`)."""
    global _declared_by
    _declared_by = os.getpid()


def exits_at_once() -> bool:
    return _declared_by == os.getpid()


def leave(*objects: object) -> bool:
    """Keep `objects` alive until the process ends, where it ends at once (what was left before is
    released now); False, keeping nothing, where the process lives on."""
    global _left
    if _declared_by != os.getpid():
        return False
    _left = objects
    return True
