"""The structured layer's commands on the command line: `properties`, `tasks`, `base`, `checkup`.

Only argument definitions live here (imported on every `cairn` start, so nothing heavy);
the commands themselves are in `core.cli.structured_cmd`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

WHERE_HELP = "a property condition: KEY=VALUE, KEY!=VALUE, KEY<VALUE (<=, >, >=) or has:KEY (repeatable; all must hold)"


def add_structured_commands(sub: argparse._SubParsersAction, add_filters: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register the commands on `sub`; `add_filters` adds the search filter options."""
    pr = sub.add_parser("properties", help="the front-matter properties in use: keys, types, values and note counts")
    pr.add_argument("key", nargs="?", default=None, help="list this key's values only")
    pr.add_argument("--vault", action="append", default=[], help="limit to this vault (repeatable)")
    pr.add_argument("--json", action="store_true")
    t = sub.add_parser("tasks", help="task lines (- [ ] ...) with their note, heading, dates and priority")
    t.add_argument("query", nargs="?", default="", help="words and filters (task:open, due<2026-12-01, project:X)")
    state = t.add_mutually_exclusive_group()
    state.add_argument("--open", dest="state", action="store_const", const="open", help="open tasks only")
    state.add_argument("--done", dest="state", action="store_const", const="done", help="done or cancelled tasks only")
    t.add_argument("--due-before", default=None, help="due on or before YYYY-MM-DD")
    t.add_argument("-k", type=int, default=None, help="at most this many tasks")
    t.add_argument("--json", action="store_true")
    add_filters(t)
    b = sub.add_parser("base", help="an Obsidian Base (.base file): its view's rows, or a search within them")
    b.add_argument("file", help="the .base file (a path, or VAULT/path/in/vault.base)")
    b.add_argument("query", nargs="?", default="", help="search only the Base's rows (empty: list them in the view's order)")
    b.add_argument("--view", default=None, help="the view's name (default: the first)")
    b.add_argument("-k", type=int, default=20, help="number of search results")
    b.add_argument("--mode", choices=("hybrid", "keyword", "semantic"), default="hybrid")
    b.add_argument("--json", action="store_true")
    ch = sub.add_parser("checkup", help="a vault check-up: broken links, orphans, similar unlinked notes, near-duplicates, mixed property types")
    ch.add_argument("--vault", default=None, help="the vault (needed when several are indexed)")
    ch.add_argument("--json", action="store_true")
