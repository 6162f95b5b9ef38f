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

    if not args.allow_restricted and not getattr(args, "no_bridge", False) and _bridge():
        return EXIT_OK
    print("cairn: MCP server on stdio (logs here on stderr)", file=sys.stderr)
    serve_stdio(allow_restricted=args.allow_restricted)
    return EXIT_OK


def _bridge() -> bool:
    """Forward stdio to the running HTTP server (the app's or `cairn serve`'s) if there is one.

    `--allow-restricted` never bridges: an agent of the shared server never sees
    restricted notes, so that client needs a server of its own. CAIRN_AGENT_TOKEN
    makes the bridge call as that agent (its scope) instead of as the local user.
    """
    import os

    import anyio

    from core.agents.bridge import serve_bridge
    from core.agents.runner import find_running
    from core.base.paths import AppPaths

    running = find_running(AppPaths.from_env())
    if running is None:
        return False
    print(f"cairn: MCP on stdio, bridged to the running server at {running.url}", file=sys.stderr)
    anyio.run(serve_bridge, running, os.environ.get("CAIRN_AGENT_TOKEN") or None)
    return True
