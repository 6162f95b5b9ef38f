"""`cairn fetch` (one chunk by reference) and `cairn mcp` (the MCP server over stdio).

Both live apart from `commands.py` because they belong to the "notes as a
tool for a model" side: the fetch is what a model calls after reading an
evidence pack, and the server is how it calls it.
"""

from __future__ import annotations

import argparse
import sys

from core.cli.common import EXIT_OK, print_json


def cmd_fetch(args: argparse.Namespace) -> int:
    """Exit 0 with the chunk, 1 for a stale reference or restricted note, 2 for a malformed one."""
    from core.answer.fetch import fetch_chunk
    from core.cli.commands import open_engine

    engine = open_engine()
    chunk = fetch_chunk(engine, args.ref, expected_version=args.expect_version, allow_restricted=args.allow_restricted)
    if args.json:
        print_json(chunk.to_json())
    else:
        for w in chunk.warnings:
            print(f"warning: {w}", file=sys.stderr)
        sys.stdout.write(chunk.to_text().rstrip("\n") + "\n")
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until the client hangs up; nothing but protocol is written to stdout."""
    from core.mcp_server import serve_stdio

    print("cairn: MCP server on stdio (logs here on stderr)", file=sys.stderr)
    serve_stdio(allow_restricted=args.allow_restricted)
    return EXIT_OK
