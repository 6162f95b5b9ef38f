"""`cairn ask`: stream an answer to stdout, sources and warnings after it."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from core.answer import Answerer, AskRequest, AskResponse
from core.base.errors import IndexNotBuiltError, UsageError
from core.base.models import cited_path
from core.cli.commands import open_engine
from core.cli.common import EXIT_FAIL, EXIT_OK, cancel_on_sigint, print_json
from core.vault.display_text import heading_text

EXTRACTIVE = "extractive"


def make_provider(provider_id: str | None, model: str | None, base_url: str | None) -> Any | None:
    """None for the offline extractive answer; otherwise a chat provider from the registry."""
    if provider_id in (None, "", EXTRACTIVE):
        return None
    from core.providers.llm import LLMError, create_chat_provider, default_llm_registry

    registry = default_llm_registry()
    info = registry.get(provider_id)
    if info is None:
        raise UsageError(f"unknown provider {provider_id!r}; choose extractive or one of {', '.join(sorted(registry))}")
    key = info.api_key()
    try:
        return create_chat_provider(provider_id, model=model, base_url=base_url, api_key=key)
    except (LLMError, ValueError) as exc:
        raise UsageError(str(exc)) from exc


def response_json(resp: AskResponse) -> dict[str, Any]:
    data = asdict(resp)
    for source in data["sources"]:
        source["hits"] = [
            {"rel_path": h["chunk"]["rel_path"], "chunk_ordinal": h["chunk"]["ordinal"], "score": h["score"], "contributions": h["contributions"]}
            for h in source["hits"]
        ]
    return data


def cmd_ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UsageError("ask needs a question")
    engine = open_engine()
    if not engine.vaults:
        raise IndexNotBuiltError("No vaults indexed yet — run `cairn index --vault PATH` first")
    provider = make_provider(args.provider, args.model, args.base_url)
    request = AskRequest(args.question, vaults=tuple(args.vault), folders=tuple(f.strip("/") for f in args.folder), detail=args.detail, k=args.k)
    streamed = False

    def on_delta(text: str) -> None:
        nonlocal streamed
        if not args.json:
            streamed = True
            sys.stdout.write(text)
            sys.stdout.flush()

    resp = Answerer(engine, provider, route_folders=args.route_folders).ask(request, on_delta=on_delta, cancel=cancel_on_sigint())
    if args.json:
        print_json(response_json(resp))
        return EXIT_FAIL if resp.error and not resp.answer else EXIT_OK
    if resp.standalone_question:
        print(f"(searched for: {resp.standalone_question})", file=sys.stderr)
    _print_answer(resp, streamed=streamed)
    for w in resp.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if resp.error:
        print(f"cairn: {resp.error}", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def _print_answer(resp: AskResponse, *, streamed: bool) -> None:
    """The answer (unless it streamed already) and its sources, as text."""
    if streamed and resp.unverified:
        # What streamed was the model's text; it cited nothing, so the notes' own passages follow.
        sys.stdout.write("\n\n(unverified: the text above cites none of your notes)\n\n" + resp.answer)
    elif not streamed:
        sys.stdout.write(resp.answer)
    sys.stdout.write("\n")
    if resp.references:
        print("\nSources:")
        for r in resp.references:
            where = f" › {heading_text(r.heading_path)}" if r.heading_path else ""
            span = f"bytes {r.start_byte}–{r.end_byte}" if r.page is None else f"#{r.chunk_ordinal}"
            print(f"  [{r.number}] {r.vault}/{cited_path(r.rel_path, r.page, r.last_page)}{where}  ({span})")
