"""`cairn search`: one search from a new process, importing only what that search needs.

A CLI search pays Python's start-up and every import on each call, so this module
stays apart from the other commands (which import the note parser, the PDF
extractor and the index writer): a keyword search never loads numpy, onnxruntime,
usearch or the markdown parser, and a hybrid one loads the model's side only.
"""

from __future__ import annotations

import argparse
import sys

from core.base.errors import IndexNotBuiltError, UsageError
from core.base.models import Hit, HitKind, SearchFilters, SearchMode, SearchResponse, cited_path
from core.base.paths import AppPaths
from core.base.structured import PropertyFilter
from core.cli.common import EXIT_OK, print_json
from core.engine import Engine
from core.search.profiles import fusion_text
from core.search.query import parse_date
from core.search.search import SearchRequest
from core.vault.display_text import heading_text


def filters_from_args(args: argparse.Namespace) -> SearchFilters:
    for label in ("after", "before"):
        value = getattr(args, label)
        if value and parse_date(value) is None:
            raise UsageError(f"--{label} {value!r} is not a date (use YYYY-MM-DD)")
    return SearchFilters(
        vaults=tuple(args.vault),
        folders=tuple(f.strip("/") for f in args.folder),
        tags=tuple(t.lstrip("#").lower() for t in args.tag),
        tag_mode=args.tag_mode,
        doc_types=tuple(t.lower() for t in args.doc_type),
        after=parse_date(args.after) if args.after else None,
        before=parse_date(args.before) if args.before else None,
        allow_restricted=args.allow_restricted,
        where=_wheres(getattr(args, "where", None)),
    )


def _wheres(texts: list[str] | None) -> tuple[PropertyFilter, ...]:
    from core.search.property_query import parse_wheres

    try:
        return parse_wheres(texts)
    except ValueError as exc:
        raise UsageError(f"--where: {exc}") from None


def cmd_search(args: argparse.Namespace) -> int:
    engine = Engine(AppPaths.from_env())
    if not engine.vaults:
        raise IndexNotBuiltError("No vaults indexed yet — run `cairn index --vault PATH` first")
    if args.keyword_weight is not None and not 0.0 <= args.keyword_weight <= 1.0:
        raise UsageError("--keyword-weight must be between 0 and 1")
    request = SearchRequest(
        args.query,
        mode=args.mode,
        k=args.k,
        filters=filters_from_args(args),
        profile=args.profile,
        fusion=args.fusion,
        keyword_share=args.keyword_weight,
        rrf_k=args.rrf_k,
        spelling=not getattr(args, "as_typed", False),
        grouped=True,  # matches first, a few related notes under a divider
    )
    try:
        resp = _search(engine, request)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from exc
    fmt = "json" if args.json else (getattr(args, "format", None) or "text")
    if fmt == "json":
        from core.serialize import search_json

        print_json(search_json(resp))
        return EXIT_OK
    if fmt == "llm":
        from core.answer.evidence import build_llm_pack

        sys.stdout.write(build_llm_pack(resp).render() + "\n")
        return EXIT_OK
    _print_notices(resp)
    if args.explain:
        print(f"fusion: {fusion_text(resp.settings, resp.mode)}")
    if not resp.hits:
        print("No matches.")
    for i, h in enumerate(resp.hits, 1):
        if h.kind == HitKind.RELATED and (i == 1 or resp.hits[i - 2].kind != HitKind.RELATED):
            print("── Related notes (found by meaning; they do not hold the query's words) ──")
        _print_hit(i, h, explain=args.explain)
    print(f"({resp.mode} search, {resp.timings_ms.get('total', 0):.1f} ms)", file=sys.stderr)
    return EXIT_OK


def _print_hit(i: int, h: Hit, *, explain: bool) -> None:
    """One hit as text: title and reference, snippet, and with `explain` its score breakdown."""
    where = f" › {heading_text(h.chunk.heading_path)}" if h.chunk.heading_path else ""
    cited = h.chunk.rel_path if h.page is None else f"{cited_path(h.chunk.rel_path, h.page)} · "
    ref = f"{h.chunk.vault}/{cited}#{h.chunk.ordinal}"
    print(f"{i:>2}. {h.title}{where}  [{ref}]  score {h.score:.4f}")
    print(f"    {h.snippet}")
    if h.more:
        print(f"    (+{len(h.more)} more passage{'s' if len(h.more) != 1 else ''} in this note)")
    if explain:
        bm = f"rank {h.bm25.rank}, score {h.bm25.score:.3f}" if h.bm25 else "not a candidate"
        vec = f"rank {h.vector.rank}, cosine {h.vector.score:.3f}" if h.vector else "not a candidate"
        print(f"    BM25: {bm}; vector: {vec}")
        for t in h.contributions:
            print(f"      + {t.value:.5f}  {t.name}")
        print(f"      = {h.score:.5f}")


def _search(engine: Engine, request: SearchRequest) -> SearchResponse:
    """The search, set up for a process that embeds at most one query and exits.

    A query asked before skips onnxruntime and the model (its vector is kept on disk),
    and a new one runs on a session that starts fast. A keyword search sets up neither:
    importing the embedding side would load numpy. Switched back afterwards: `main`
    also runs inside longer-lived processes (tests, scripts).
    """
    if SearchMode(request.mode) == SearchMode.KEYWORD:
        return engine.search(request)
    from core.base.native import load_usearch
    from core.cli.search_prefetch import needs_model, start_prefetch
    from core.index.vector_store import lean_opens
    from core.providers.embedding.onnx_minilm import quick_queries
    from core.search.query_vectors import use_disk_cache

    use_disk_cache(engine.paths.cache_dir / "query-vectors")
    quick_queries()
    lean_opens()
    new_query = needs_model(engine, request)  # a query asked before needs neither onnxruntime nor the model
    load_usearch(onnxruntime_first=new_query)  # before the second thread: its lean import needs one thread
    prefetch = start_prefetch(engine, request) if new_query else None
    try:
        return engine.search(request)
    finally:
        if prefetch is not None:
            prefetch.join()
        use_disk_cache(None)
        quick_queries(False)
        lean_opens(False)


def _print_notices(resp: SearchResponse) -> None:
    """The spelling correction on stdout (it says what was searched), the other warnings on stderr."""
    if resp.correction:
        print(f"{resp.correction.message} (cairn search --as-typed)")
    for w in resp.warnings:
        if not (resp.correction and w == resp.correction.message):
            print(f"warning: {w}", file=sys.stderr)
