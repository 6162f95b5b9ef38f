"""`cairn links NOTE`: where a note points, what points at it, and what is related."""

from __future__ import annotations

import argparse

from core.base.errors import UsageError
from core.cli.commands import open_engine
from core.cli.common import EXIT_OK, print_json
from core.search.related import NoteLinks
from core.serialize import links_json


def cmd_links(args: argparse.Namespace) -> int:
    engine = open_engine()
    name = args.vault or (engine.vaults[0].name if len(engine.vaults) == 1 else None)
    if name is None:
        raise UsageError("Several vaults are indexed: say which with --vault NAME")
    result = engine.links(name, args.note, k=args.k, allow_restricted=args.allow_restricted)
    if args.json:
        print_json(links_json(result))
    else:
        print(render_links(result))
    return EXIT_OK


def render_links(nl: NoteLinks) -> str:
    lines = [f"{nl.title}  [{nl.vault}/{nl.rel_path}]"]
    if nl.aliases:
        lines.append(f"  aliases: {', '.join(nl.aliases)}")
    lines.append(f"Links ({len(nl.outgoing)}):")
    for o in nl.outgoing:
        where = o.rel_path or ("attachment" if o.attachment else "unresolved")
        anchor = f"#{o.anchor}" if o.anchor else ""
        lines.append(f"  L{o.line:<4} {o.target}{anchor} -> {where}")
    lines.append(f"Backlinks ({len(nl.backlinks)}):")
    lines.extend(f"  {b.rel_path}:{b.line}  {b.context}" for b in nl.backlinks)
    lines.append(f"Unlinked mentions ({len(nl.mentions)}):")
    lines.extend(f"  {b.rel_path}:{b.line}  {b.context}" for b in nl.mentions)
    lines.append(f"Related ({len(nl.related)}):" + (f"  ({nl.semantic_note})" if nl.semantic_note else ""))
    lines.extend(f"  {r.score:.3f}  {r.title}  [{r.rel_path}]  {'; '.join(r.reasons)}" for r in nl.related)
    return "\n".join(lines)
