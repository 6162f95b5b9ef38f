"""`cairn index|search|status|chunk|similar|links|eval|fetch|mcp|serve|agents`: argument parsing and exit codes.

Exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 3 evaluation
degraded against its baseline, 4 index not built.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TypeAlias

from core.base import module_code
from core.base.compiled_table import command_role

if __name__ == "__main__":  # `python -m core.cli.main`: the command itself, its imports served from here on (`entry`)
    module_code.install(role=command_role(sys.argv))

from core.base.lean_import import import_argparse_lean, import_filelock_lean, import_shutil_lean  # noqa: E402

import_argparse_lean()  # before anything imports argparse (see its docstring)

import argparse  # noqa: E402

from core.base import dataclass_code, regex_code  # noqa: E402
from core.base.errors import CairnError, UsageError  # noqa: E402
from core.base.gc_pause import gc_paused  # noqa: E402
from core.cli.common import EXIT_DEGRADED, EXIT_FAIL, EXIT_NOT_BUILT, EXIT_OK, EXIT_USAGE  # noqa: E402, F401 - the exit codes are main's contract
from core.cli.process_exit import ends_at_once, exit_now, quiet_collector, skip_final_collections  # noqa: E402
from core.cli.structured_args import WHERE_HELP, add_structured_commands  # noqa: E402


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too, but we want our own wording
        self.print_usage(sys.stderr)
        raise UsageError(message)


def positive_int(text: str) -> int:
    """A count option (`-k`, `--rrf-k`, `--limit-queries`): refused unless a whole number above zero.

    One type for every command, so `-k -1` never slices a list from its end and `-k 0` never
    answers an empty list as if nothing matched.
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


#: The sub-command table `build_parser` fills, one `_add_*` function per command.
Commands: TypeAlias = "argparse._SubParsersAction[_Parser]"


def build_parser(*, search_only: bool = False, only: str | None = None) -> argparse.ArgumentParser:
    """The `cairn` parser; `only` ("search" or "index"; `search_only`: "search"): that sub-command
    alone, for a process that runs it (a cold search or index builds one command's options instead
    of all fifteen's: ~7 ms, and imports no other command's module)."""
    p = _Parser(prog="cairn", description="Search and ask your markdown notes, offline.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    only = "search" if search_only else only
    if only == "search":
        _add_search(sub)
        return p
    if only == "index":
        _add_index(sub)
        return p
    _add_index(sub)
    _add_search(sub)
    _add_similar(sub)
    _add_links(sub)
    _add_ask(sub)
    _add_watch(sub)
    _add_chunk(sub)
    _add_fetch(sub)
    _add_mcp(sub)
    _add_status(sub)
    _add_eval(sub)
    add_structured_commands(sub, _add_filter_args)
    return p


def _add_index(sub: Commands) -> None:
    ix = sub.add_parser("index", help="register vaults and bring their indexes up to date")
    ix.add_argument("--vault", action="append", default=[], metavar="PATH_OR_NAME", help="a folder (registered if new) or a vault name")
    ix.add_argument("--no-embed", action="store_true", help="keyword index only; skip embeddings")
    ix.add_argument(
        "--embedder", default=None, metavar="PROVIDER",
        help="set the embedding model of the --vault vaults: builtin (English MiniLM), multilingual "
        "(multilingual-e5-small, where installed), ollama or openai; their notes are re-embedded",
    )  # fmt: skip
    ix.add_argument("--json", action="store_true")
    ix.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _add_search(sub: Commands) -> None:
    from core.base.model_basics import SearchMode  # here: no dataclass is made before `entry` starts

    s = sub.add_parser("search", help="search the indexed vaults")
    s.add_argument("query", help='what to look for; a query may start with "-" (cairn search -budget)')
    _add_filter_args(s)
    s.add_argument("--mode", type=SearchMode, choices=list(SearchMode), default=SearchMode.HYBRID)
    s.add_argument("--profile", default=None, help="default | recent | keyword-heavy")
    s.add_argument(
        "--fusion", choices=("blend", "rrf"), default=None, help="hybrid fusion: blend of normalised scores, or reciprocal rank (default: the configured one)"
    )
    s.add_argument(
        "--keyword-weight", type=float, default=None, metavar="0..1", help="blend: the keyword list's share of the score (default: the configured one)"
    )
    s.add_argument("--rrf-k", type=positive_int, default=None, help="rrf: the k of weight / (k + rank) (default: the configured one)")
    s.add_argument("-k", type=positive_int, default=10, help="number of hits (default 10)")
    s.add_argument("--explain", action="store_true", help="print each hit's score breakdown")
    s.add_argument("--as-typed", action="store_true", help="search the words as typed (no correction of words the vaults lack)")
    s.add_argument("--format", choices=("text", "json", "llm"), default=None, help="text (default), json, or llm (compact evidence pack)")
    s.add_argument("--json", action="store_true", help="same as --format json")


def _add_similar(sub: Commands) -> None:
    sim = sub.add_parser("similar", help="notes nearest to a note, by meaning")
    sim.add_argument("rel_path")
    sim.add_argument("--vault", default=None)
    sim.add_argument("-k", type=positive_int, default=10)
    sim.add_argument("--allow-restricted", action="store_true", help="use (and show) notes marked confidentiality: restricted")
    sim.add_argument("--json", action="store_true")


def _add_links(sub: Commands) -> None:
    ln = sub.add_parser("links", help="a note's links, backlinks, unlinked mentions and related notes")
    ln.add_argument("note", help="path inside the vault (e.g. Projects/Plan.md) or a note name as a [[link]] would say it")
    ln.add_argument("--vault", default=None)
    ln.add_argument("-k", type=positive_int, default=10, help="related notes to list (default 10)")
    ln.add_argument("--allow-restricted", action="store_true", help="include notes marked confidentiality: restricted")
    ln.add_argument("--json", action="store_true")


def _add_ask(sub: Commands) -> None:
    a = sub.add_parser("ask", help="answer a question from your notes, with citations")
    a.add_argument("question", help='the question; it may start with "-"')
    a.add_argument("--vault", action="append", default=[], help="limit to this vault (repeatable)")
    a.add_argument("--folder", action="append", default=[], help="limit to this folder prefix (repeatable)")
    a.add_argument("--provider", default=None, help="extractive (offline default) | ollama | openai | anthropic")
    a.add_argument("--model", default=None)
    a.add_argument("--base-url", default=None)
    a.add_argument("--detail", choices=("brief", "normal", "detailed"), default="normal")
    a.add_argument("-k", type=positive_int, default=None, help="chunks of context (default: chosen from 3 to 8)")
    a.add_argument("--json", action="store_true", help="print the whole response as JSON")
    a.add_argument("--route-folders", action="store_true", help="let the model pick the folders to search first (needs --provider)")


def _add_watch(sub: Commands) -> None:
    w = sub.add_parser("watch", help="follow edits live; Ctrl-C (or SIGTERM) flushes and exits")
    w.add_argument("--vault", action="append", default=[], help="vault name (default: all)")
    w.add_argument("--debounce", type=float, default=1.0, help="quiet seconds before a re-index (default 1)")
    w.add_argument("--flush-after", type=float, default=30.0, help="quiet seconds before a flush to disk (default 30)")


def _add_chunk(sub: Commands) -> None:
    c = sub.add_parser("chunk", help="show how a markdown, PDF or text file is chunked")
    c.add_argument("file")
    c.add_argument("--json", action="store_true")


def _add_fetch(sub: Commands) -> None:
    f = sub.add_parser("fetch", help="print one chunk by reference (VAULT/REL_PATH#ORDINAL), checked against the note")
    f.add_argument("ref", help="e.g. notes/Recipes/Soup.md#2")
    f.add_argument("--expect-version", default=None, help="fail as stale unless the note's indexed version is this")
    f.add_argument("--allow-restricted", action="store_true", help="allow notes marked confidentiality: restricted")
    f.add_argument("--json", action="store_true")


def _add_mcp(sub: Commands) -> None:
    m = sub.add_parser("mcp", help="serve the notes to an MCP client over stdio")
    m.add_argument("--allow-restricted", action="store_true", help="let the client see notes marked confidentiality: restricted")
    m.add_argument("--no-bridge", action="store_true", help="serve in this process even when `cairn serve` or the app is serving")
    from core.cli import agents_cmd  # `serve` and `agents`: imported for the whole parser only

    agents_cmd.add_parsers(sub, _Parser)


def _add_status(sub: Commands) -> None:
    st = sub.add_parser("status", help="per-vault index health")
    st.add_argument("--json", action="store_true")


def _add_eval(sub: Commands) -> None:
    from core.base.model_basics import SearchMode

    ev = sub.add_parser("eval", help="evaluate retrieval on a golden file or a BEIR dataset")
    ev.add_argument("golden", nargs="?", help="golden file (.yaml or .json)")
    ev.add_argument("--beir", metavar="DIR", help="a BEIR dataset folder instead of a golden file")
    ev.add_argument("--split", default="train")
    ev.add_argument("--modes", default=None, help="comma-separated modes (BEIR default: keyword,semantic,hybrid)")
    ev.add_argument(
        "--mode", type=SearchMode, choices=list(SearchMode), default=None, help="default: hybrid, or every mode for a golden file that names its vault"
    )
    ev.add_argument("--summary", action="store_true", help="list only failed cases, then one line per mode")
    ev.add_argument("--vault", default=None)
    ev.add_argument("-k", type=positive_int, default=10)
    ev.add_argument("--baseline", default=None, help="an earlier --json report to compare with")
    ev.add_argument("--tolerance", type=float, default=0.01)
    ev.add_argument("--limit-queries", type=positive_int, default=None, help="evaluate only the first N queries")
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--quiet", action="store_true")
    ev.add_argument("--provider", default=None, help="answering provider for ask cases (default: extractive)")
    ev.add_argument("--no-ask", action="store_true", help="skip the golden file's ask cases")
    ev.add_argument("--model", default=None, help="the model of --provider")
    ev.add_argument("--base-url", default=None, help="the server of --provider")
    ev.add_argument("--route-folders", action="store_true", help="ask cases with folder routing (needs --provider)")


def _add_filter_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vault", action="append", default=[], help="limit to this vault (repeatable)")
    p.add_argument("--folder", action="append", default=[], help="limit to this folder prefix (repeatable)")
    p.add_argument("--tag", action="append", default=[], help="limit to notes with this tag (repeatable)")
    p.add_argument("--tag-mode", choices=("any", "all"), default="any")
    p.add_argument("--type", action="append", default=[], dest="doc_type", help="limit to this doc_type")
    p.add_argument("--after", default=None, help="notes dated on or after YYYY-MM-DD")
    p.add_argument("--before", default=None, help="notes dated on or before YYYY-MM-DD")
    p.add_argument("--allow-restricted", action="store_true", help="include notes marked confidentiality: restricted")
    p.add_argument("--where", action="append", default=[], help=WHERE_HELP)


def entry() -> NoReturn:
    """The `cairn` command: `main` (its modules, regular expressions and dataclasses made from what earlier runs
    read and compiled: `core.base.module_code`, `core.base.regex_code`, `core.base.dataclass_code`), then an exit,
    at once after a search or a keyword-only index (core.cli.process_exit)."""
    role = command_role(sys.argv)  # a table per kind of process
    module_code.install(role=role)
    regex_code.install(role=role)
    dataclass_code.install(role=role)
    import_shutil_lean()
    code = main(own_process=True)
    dataclass_code.save()
    regex_code.save()
    module_code.save()
    if len(_ran) == 1 and ends_at_once(_ran[0]):
        exit_now(code)
    sys.exit(code)


_ran: list[argparse.Namespace] = []  # the commands `main` dispatched in this process (read by `entry`)


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """Run one command; `own_process`: the process is `cairn` itself (`entry`), not a test or a script. Never exits."""
    try:
        words = list(sys.argv[1:] if argv is None else argv)
        only = words[0] if words[:1] in (["search"], ["index"]) else None
        # A search's or an index's own short process: no cyclic pass over what the parser (and the imports before
        # it) made, frozen before the collector runs again (its first pass there, a generation-1 one, was ~1.5 ms).
        with gc_paused(own_process and only is not None):
            parser = build_parser(only=only)
            words = dashed_text_as_positional(parser, words)
            args, extra = parser.parse_known_args(words)
            if extra:  # the whole parser says what is wrong, in the words it always has
                args = build_parser().parse_args(words)
            require_text(args)
            if own_process and only is not None:
                skip_final_collections()
        code = _dispatch(args, own_process=own_process)
        if own_process and args.command == "search":
            skip_final_collections()
        return code
    except CairnError as exc:
        print(f"cairn: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("cairn: interrupted", file=sys.stderr)
        return EXIT_FAIL
    except BrokenPipeError:
        return EXIT_OK


#: Options that are words to match, not file names: they must be text (file names may be any bytes).
_TEXT_OPTIONS = {"query": "the query", "question": "the question", "folder": "--folder", "tag": "--tag", "doc_type": "--type"}


def require_text(args: argparse.Namespace) -> None:
    """Refuse a query, question or filter that is not valid UTF-8.

    Python hands argv bytes that are not UTF-8 over as lone surrogates (`$'\\xff'` becomes
    `'\\udcff'`); they cannot be encoded, analysed or printed, so they would end in a traceback
    deep in the search. Say which argument and which byte instead.
    """
    for dest, label in _TEXT_OPTIONS.items():
        values = getattr(args, dest, None)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str):
                continue
            bad = next((ch for ch in value if "\udc80" <= ch <= "\udcff"), None)
            if bad is not None:
                raise UsageError(f"{label} is not valid UTF-8 text (byte 0x{ord(bad) - 0xDC00:02x}); check the terminal's encoding")


def dashed_text_as_positional(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """`cairn search -budget` searches for "-budget" instead of failing on an unknown flag.

    A query or question is free text, and people type what they mean; so in `search` and `ask`
    a word that starts with a single "-" but is no option of the command (`-k`, `-h` are) is
    taken as the query when no query was given otherwise. `--anything` is still an option.
    """
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    pos = next((i for i, a in enumerate(argv) if a in ("search", "ask")), None)
    if sub is None or pos is None or "--" in argv:
        return argv
    command = sub.choices[argv[pos]]
    known = set(command._option_string_actions)
    takes_value = {o for o, a in command._option_string_actions.items() if a.nargs != 0}
    rest, free, i = argv[pos + 1 :], [], 0
    kept: list[str] = []
    while i < len(rest):
        tok = rest[i]
        if tok.startswith("--") or tok[:2] in known:
            kept.append(tok)
            if tok.split("=", 1)[0] in takes_value and "=" not in tok and tok in known and i + 1 < len(rest):
                kept.append(rest[i + 1])
                i += 1
        elif tok.startswith("-") and len(tok) > 1:
            free.append(tok)
        else:
            kept.append(tok)
            free.append("")  # a positional given the usual way
        i += 1
    dashed = [t for t in free if t]
    if len(dashed) != 1 or len(free) != 1:
        return argv  # none, or more free words than one query: let argparse say what is wrong
    return argv[: pos + 1] + kept + ["--", dashed[0]]


def _dispatch(args: argparse.Namespace, *, own_process: bool = False) -> int:
    _ran.append(args)
    if args.command == "search":  # the one command people time: it imports only what it needs
        if own_process:
            quiet_collector()
        from core.cli import search_cmd

        return search_cmd.cmd_search(args)
    if args.command == "index":
        return _index(args, own_process=own_process)
    if args.command in _LAZY:  # their modules imported when they run: none of them by a cold index or search
        module, function = _LAZY[args.command]
        run: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"core.cli.{module}"), function)
        return run(args)
    from core.cli import commands

    handler = {"similar": commands.cmd_similar, "chunk": commands.cmd_chunk, "status": commands.cmd_status}[args.command]
    return handler(args)


#: command -> (module in core.cli, its function) of the commands `_dispatch` imports on demand.
_LAZY = {
    "watch": ("watch_cmd", "cmd_watch"), "ask": ("ask_cmd", "cmd_ask"), "links": ("links_cmd", "cmd_links"),
    "eval": ("eval_cmd", "cmd_eval"), "fetch": ("mcp_cmd", "cmd_fetch"), "mcp": ("mcp_cmd", "cmd_mcp"),
    "serve": ("agents_cmd", "cmd_serve"), "agents": ("agents_cmd", "cmd_agents"),
    **dict.fromkeys(("properties", "tasks", "base", "checkup"), ("structured_cmd", "run")),
}  # fmt: skip


def _index(args: argparse.Namespace, *, own_process: bool = False) -> int:
    """`own_process`: the imports (and the early worker's start, which reads the configuration) run with the cyclic
    collector paused (~25k objects, no garbage: its passes were ~7 ms) and what they made is frozen before it runs
    again (frozen after, the first pass walked them all: 3.7-6 ms of every cold index)."""
    with gc_paused(own_process):
        from core.cli import early_worker

        try:
            early_worker.start_early(args.vault)  # its start overlaps the imports below
            # With the command, what every sync imports anyway (the vault's lock, the scan, the note pipeline):
            # here, no pass walks what they make (~2 ms of passes).
            import_filelock_lean()

            from core.cli import commands
            from core.index import intake  # noqa: F401
        except BaseException:
            early_worker.stop_unused()
            raise
        if own_process:
            skip_final_collections()  # gc.freeze(): also after the run, should the process exit the usual way
    try:
        return commands.cmd_index(args)
    finally:
        early_worker.stop_unused()


if __name__ == "__main__":
    entry()
