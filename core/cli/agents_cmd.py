"""`cairn serve` (the shared MCP server over HTTP) and `cairn agents add|list|revoke|log`.

Agents are the AI clients the user lets read their notes, each with its own
token and scope (`core.agents`). The token is printed once, by `add`, and never
again: only its hash is kept.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from core.base.errors import UsageError
from core.cli.common import EXIT_OK, print_json

WARM_UP_JOIN_S = 60.0  # longest wait at exit for the warm-up search (a model session opening)


def add_parsers(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """The `serve` and `agents` sub-commands (called by `core.cli.main.build_parser`)."""
    sv = sub.add_parser("serve", help="serve MCP over HTTP on 127.0.0.1 to the agents set up with `cairn agents add`")
    sv.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default 8765)")
    sv.add_argument("--watch", action="store_true", help="also keep the indexes live while serving")

    ag = sub.add_parser("agents", help="the AI agents allowed to read your notes: add, list, revoke, log")
    asub = ag.add_subparsers(dest="agents_command", required=True, parser_class=parser_class)
    add = asub.add_parser("add", help="a new agent; prints its token once")
    add.add_argument("name")
    add.add_argument("--vault", action="append", default=[], help="a vault it may read (repeatable; none and no --folder: all vaults)")
    add.add_argument("--folder", action="append", default=[], metavar="VAULT/FOLDER", help="a folder it may read (repeatable)")
    add.add_argument("--tools", default=None, help="comma-separated: search,fetch,ask,links,related,vaults,checkup (default: all)")
    add.add_argument("--internal", action="store_true", help="may see notes marked internal (and unmarked ones); default: public only")
    add.add_argument("--rate", type=int, default=60, help="calls a minute (0 = no limit; default 60)")
    add.add_argument("--expires-days", type=float, default=None, metavar="DAYS", help="the token stops working after this many days (default: never)")
    add.add_argument("--json", action="store_true")
    ls = asub.add_parser("list", help="the agents and their scopes (never their tokens)")
    ls.add_argument("--json", action="store_true")
    rv = asub.add_parser("revoke", help="remove an agent: its token stops working at once")
    rv.add_argument("name")
    lg = asub.add_parser("log", help="what the agents asked and were given, newest first")
    lg.add_argument("name", nargs="?", default=None)
    lg.add_argument("--note", default=None, help="only calls that returned this note (part of its path)")
    lg.add_argument("--limit", type=int, default=50)
    lg.add_argument("--json", action="store_true")


def cmd_agents(args: argparse.Namespace) -> int:
    from core.agents.audit import AuditLog
    from core.agents.tokens import AgentStore
    from core.base.paths import AppPaths

    paths = AppPaths.from_env()
    store = AgentStore(paths)
    if args.agents_command == "add":
        return _add(args, paths, store)
    if args.agents_command == "list":
        agents = store.agents()
        if args.json:
            print_json([{"name": a.name, "created": a.created, "expires": a.expires or None, "scope": a.scope.to_json()} for a in agents])
        elif not agents:
            print("no agents yet: cairn agents add NAME")
        for a in [] if args.json else agents:
            until = (" EXPIRED" if a.expired() else f", until {a.expires}") if a.expires else ""
            print(f"{a.name}  (since {a.created}{until})  {a.scope.describe()}")
        return EXIT_OK
    if args.agents_command == "revoke":
        store.revoke(args.name)
        print(f"revoked {args.name}: its token no longer works")
        return EXIT_OK
    entries = AuditLog(paths).entries(client=args.name, note=args.note, limit=max(1, args.limit))
    if args.json:
        print_json([e.to_json() for e in entries])
        return EXIT_OK
    for e in entries:
        what = f" {e.query!r}" if e.query else ""
        refs = f" -> {', '.join(e.refs)}" if e.refs else ""
        print(f"{e.time}  {e.client}  {e.tool}{what}  [{e.outcome}, {e.ms:.0f} ms]{refs}")
    if not entries:
        print("no calls logged yet", file=sys.stderr)
    return EXIT_OK


def _add(args: argparse.Namespace, paths: Any, store: Any) -> int:
    from core.agents.scope import Area, Scope, parse_folder, parse_tools
    from core.base.config import load_config

    known = [v.name for v in load_config(paths).vaults]
    for v in args.vault:
        if v not in known:
            raise UsageError(f"no vault named {v!r} (known: {', '.join(known) or 'none'})")
    try:
        areas = tuple(Area(v) for v in args.vault) + tuple(parse_folder(f, known) for f in args.folder)
        tools = parse_tools(args.tools)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if args.rate < 0:
        raise UsageError("--rate must be 0 (no limit) or more")
    agent, token = store.add(args.name, Scope(areas=areas, tools=tools, internal=args.internal, rate=args.rate), valid_days=args.expires_days)
    if args.json:
        print_json({"name": agent.name, "token": token, "scope": agent.scope.to_json(), "expires": agent.expires or None})
    else:
        until = f"; expires {agent.expires}" if agent.expires else ""
        print(f"agent {agent.name}: {agent.scope.describe()}{until}")
        print(f"token (shown once; keep it in the client's config): {token}")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM, then finish the calls in flight and remove the state file."""
    from core.agents.runner import DEFAULT_PORT, AgentService, ServerOptions
    from core.base.gc_pause import freeze_slow_survivors
    from core.base.paths import AppPaths
    from core.engine import Engine

    paths = AppPaths.from_env()
    engine = Engine(paths)
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise UsageError("--port must be 0-65535")
    service = AgentService(paths, lambda: engine, ServerOptions(port=port))
    try:
        service.start()
    except OSError as exc:
        raise UsageError(f"{service.error} (is another Cairn serving? try --port)") from exc
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    watcher = _watcher(engine) if args.watch else None
    if not service.wait_running():
        raise UsageError(service.error or "the server did not start")
    freeze_slow_survivors()  # the loaded index out of later full GC passes (see core.base.gc_pause)
    print(f"cairn: MCP over HTTP at {service.url} ({len(service.store.agents())} agent(s); Ctrl-C to stop)", file=sys.stderr, flush=True)
    warm = threading.Thread(target=engine.warm_up, name="cairn-warm-up", daemon=True)
    warm.start()
    while not stop.wait(0.5) and service.state.value == "running":
        pass
    if watcher is not None:
        watcher.stop(flush=True)
    service.stop()
    # A SIGTERM during the warm-up must not end the interpreter under a thread inside the
    # model's C++ session: that aborts the process ("terminate called...", exit -6).
    warm.join(WARM_UP_JOIN_S)
    print("cairn: server stopped", file=sys.stderr)
    return EXIT_OK


def _watcher(engine: Any) -> Any:
    from core.watcher import VaultWatcher

    watcher = VaultWatcher(engine, on_error=lambda name, exc: print(f"cairn: {name}: re-index failed: {exc}", file=sys.stderr))
    watcher.start()
    return watcher
