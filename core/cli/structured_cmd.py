"""`cairn properties`, `cairn tasks`, `cairn base` and `cairn checkup` (arguments in `structured_args`)."""

from __future__ import annotations

import argparse

from core.base.errors import UsageError
from core.cli.commands import open_engine
from core.cli.common import EXIT_OK, print_json
from core.cli.search_cmd import filters_from_args
from core.index.property_stats import KeyStats
from core.search.tasks import TaskHit
from core.structured.listing import TaskQuery, properties_json, task_json, vault_properties, vault_tasks


def run(args: argparse.Namespace) -> int:
    handler = {"properties": cmd_properties, "tasks": cmd_tasks, "base": cmd_base, "checkup": cmd_checkup}[args.command]
    return handler(args)


def cmd_properties(args: argparse.Namespace) -> int:
    stats = vault_properties(open_engine(), args.key, args.vault)
    if args.json:
        print_json(properties_json(stats))
    else:
        print(render_properties(stats, show_values=args.key is not None))
    return EXIT_OK


def render_properties(stats: list[KeyStats], *, show_values: bool) -> str:
    if not stats:
        return "No properties in use."
    lines = []
    for s in stats:
        types = ", ".join(f"{t} ({n})" for t, n in s.types) or "empty"
        flag = "" if s.consistent else "   ! mixed types"
        lines.append(f"{s.key:<24} {s.notes:>6} notes   {types}{flag}")
        if show_values:
            lines.extend(f"    {n:>6}  {v}" for v, n in s.values)
    return "\n".join(lines)


def cmd_tasks(args: argparse.Namespace) -> int:
    if args.k is not None and args.k <= 0:
        raise UsageError("-k must be a positive number")
    filters = filters_from_args(args)
    request = TaskQuery(args.query, args.state, _day(args.due_before), filters, args.k)
    hits, warnings = vault_tasks(open_engine(), request)
    if args.json:
        print_json({"query": args.query, "count": len(hits), "warnings": list(warnings), "tasks": [task_json(h) for h in hits]})
        return EXIT_OK
    for w in warnings:
        print(f"warning: {w}")
    print(render_tasks(hits))
    return EXIT_OK


def render_tasks(hits: list[TaskHit]) -> str:
    if not hits:
        return "No tasks."
    lines = []
    for h in hits:
        due = f"  due {h.task.due}" if h.task.due else ""
        lines.append(f"[{h.task.symbol}] {h.task.text}{due}   {h.vault}/{h.rel_path}:{h.task.line}")
    return "\n".join(lines)


def _day(value: str | None) -> str | None:
    from core.search.query import parse_date

    if value is None:
        return None
    day = parse_date(value)
    if day is None:
        raise UsageError(f"{value!r} is not a date (use YYYY-MM-DD)")
    return day


def cmd_base(args: argparse.Namespace) -> int:
    from core.serialize import search_json
    from core.structured.bases import base_json, open_base, search_base

    engine = open_engine()
    vault, view = open_base(engine, args.file, args.view)
    if args.query.strip():
        resp = search_base(engine, vault, view, args.query, k=args.k, mode=args.mode)
        if args.json:
            print_json({**base_json(vault, view), "rows": None, "search": search_json(resp)})
        else:
            for p in view.problems:
                print(f"warning: {p}")
            for i, h in enumerate(resp.hits, 1):
                print(f"{i:>2}. {h.title}  [{h.chunk.rel_path}]")
        return EXIT_OK
    if args.json:
        print_json(base_json(vault, view))
        return EXIT_OK
    for p in view.problems:
        print(f"warning: {p}")
    print(f"{view.base} — view {view.name!r}: {len(view.rows)} rows")
    for r in view.rows:
        cells = "  ".join(f"{c}={v}" for c, v in r.values if v not in (None, [], ""))
        print(f"  {r.rel_path}  {cells}")
    return EXIT_OK


def cmd_checkup(args: argparse.Namespace) -> int:
    from core.structured.checkup import checkup_json, vault_checkup

    engine = open_engine()
    name = args.vault or (engine.vaults[0].name if len(engine.vaults) == 1 else None)
    if name is None:
        raise UsageError("Several vaults are indexed: say which with --vault NAME")
    result = vault_checkup(engine, engine.vault(name).name)
    if args.json:
        print_json(checkup_json(result))
        return EXIT_OK
    for note in result.notes:
        print(f"note: {note}")
    titles = {
        "broken_link": "Broken links",
        "orphan": "Orphan notes",
        "unlinked_similar": "Similar but not linked",
        "near_duplicate": "Near-duplicates",
        "inconsistent_property": "Properties with mixed types",
    }
    for kind, title in titles.items():
        found = result.of(kind)
        print(f"{title} ({len(found)}):")
        for item in found:
            where = f"{item.rel_path}:{item.line}" if item.line else item.rel_path
            print(f"  {where}  {item.message}")
    return EXIT_OK
