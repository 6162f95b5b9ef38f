"""`cairn eval`: golden files over an indexed vault, or a BEIR dataset end to end."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.base.errors import ConfigError, UsageError
from core.base.models import SearchMode
from core.base.paths import AppPaths
from core.cli.common import EXIT_DEGRADED, EXIT_OK, cancel_on_sigint, print_json
from core.cli.progress import ProgressLine
from core.engine import Engine
from core.eval.beir import BeirError
from core.eval.golden import GoldenFileError, GoldenSet, load_golden
from core.eval.report import EvalReport, compare_to_baseline, load_report
from core.eval.runner import GOLDEN_VAULT, golden_engine, run_beir, run_golden

MODES = (SearchMode.KEYWORD, SearchMode.SEMANTIC, SearchMode.HYBRID)  # the order reports list them in


def _modes(text: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if not text:
        return default
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise UsageError(f"unknown mode(s) {', '.join(bad)}; choose from {', '.join(MODES)}")
    return modes


def cmd_eval(args: argparse.Namespace) -> int:
    if args.beir:
        return _beir(args)
    if not args.golden:
        raise UsageError("give a golden file (cairn eval GOLDEN.yaml) or --beir DIR")
    return _golden(args)


def _golden(args: argparse.Namespace) -> int:
    try:
        golden = load_golden(Path(args.golden))
        baseline = load_report(Path(args.baseline)) if args.baseline else None
    except GoldenFileError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        vault_dir = None if args.vault else golden.resolve_vault()
    except GoldenFileError as exc:
        raise ConfigError(str(exc)) from exc
    vault = args.vault
    if vault_dir is not None:
        # The file names its own vault: index it in the cache (never in the vault) and run every mode.
        modes = _modes(args.modes, (args.mode,) if args.mode else MODES)
        wants_vectors = any(m != "keyword" for m in modes) if golden.cases else args.mode not in (None, "keyword")
        engine = golden_engine(
            AppPaths.from_env(),
            vault_dir,
            embed=wants_vectors,
            progress=ProgressLine("index", quiet=args.quiet or args.json),
            cancel=cancel_on_sigint(),
        )
        vault = GOLDEN_VAULT
    else:
        modes = _modes(args.modes, (args.mode or "hybrid",))
        engine = Engine(AppPaths.from_env())
        if args.vault:
            engine.vault(args.vault)  # a clear error for an unknown name
    exit_code = EXIT_OK
    if golden.ask_cases and not args.no_ask:
        exit_code = _ask_cases(engine, golden, args)
    reports = []
    for mode in modes if golden.cases else ():
        report = run_golden(engine, golden, mode=mode, k=args.k, vault=vault)
        reports.append(report)
        regressions = compare_to_baseline(report, baseline, args.tolerance) if baseline and baseline.mode == mode else []
        if regressions:
            exit_code = EXIT_DEGRADED
        if args.json:
            sys.stdout.write(report.to_json())
        else:
            _print_golden(report, regressions, verbose=not args.summary)
    if not args.json and (len(reports) > 1 or args.summary):
        _print_summary(reports)
    return exit_code


def _print_summary(reports: list[EvalReport]) -> None:
    """One line per mode: the note-level numbers people compare."""
    print(f"{'mode':<10}{'R@1':>7}{'R@3':>7}{'R@10':>7}{'MRR@10':>8}{'nDCG@10':>9}{'p95 ms':>8}")
    for r in reports:
        o = r.overall
        cells = [o.get(name) or 0.0 for name in ("recall@1", "recall@3", "recall@10", "mrr@10", "ndcg@10")]
        print(f"{r.mode:<10}" + "".join(f"{v:>7.3f}" for v in cells[:3]) + f"{cells[3]:>8.3f}{cells[4]:>9.3f}{r.timings.get('query_p95_ms', 0.0):>8.1f}")


def _ask_cases(engine: Engine, golden: GoldenSet, args: argparse.Namespace) -> int:
    from core.answer import Answerer
    from core.cli.ask_cmd import make_provider
    from core.eval.ask_eval import run_ask_cases

    provider = make_provider(args.provider, args.model, args.base_url)
    report = run_ask_cases(Answerer(engine, provider, route_folders=args.route_folders), golden.ask_cases, args.vault)
    if args.json:
        print_json({"ask": report.to_json()})
    else:
        print(f"ask cases ({report.provider}): {len(report.cases)}")
        for c in report.cases:
            mark = "PASS" if c.passed else "FAIL"
            cites = ", ".join(c.cited) or ("abstained" if c.abstained else "no citations")
            print(f"  {mark} {c.case_id:<28} {cites}")
            for p in c.problems:
                print(f"       {p}")
        print(
            f"  answered {_pct(report.answered_rate)} of answerable, abstained on {_pct(report.abstain_rate)} of "
            f"unanswerable, quotes in their cited section {_pct(report.quotes_in_section_rate)}, "
            f"expected note among the sources {_pct(report.retrieved_rate)}"
        )
        print(
            f"  citation precision {report.citation_precision}, abstention accuracy {report.abstention_accuracy}, "
            f"forbidden claims {report.forbidden_claims}, first token p50 {report.first_token_p50_ms} ms"
        )
    return EXIT_OK


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def _print_golden(report: EvalReport, regressions: list[str], *, verbose: bool = True) -> None:
    print(f"mode {report.mode}, k={report.k}, {len(report.cases)} cases ({report.source})")
    for c in report.cases if verbose else [c for c in report.cases if not c.passed]:
        mark = "PASS" if c.passed else "FAIL"
        ndcg = c.metrics.get("ndcg@10")
        ndcg_text = "-" if ndcg is None else f"{ndcg:.3f}"
        print(f"  {mark} {c.case_id:<28} nDCG@10 {ndcg_text:>5}  {c.query}")
        for p in c.problems:
            print(f"       {p}")
    print("  overall: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(report.overall.items()) if v is not None))
    if report.timings:
        print("  latency: " + ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items()))
    for r in regressions:
        print(f"  DEGRADED vs baseline: {r}")


def _beir(args: argparse.Namespace) -> int:
    paths = AppPaths.from_env()
    modes = _modes(args.modes, MODES)
    progress = ProgressLine("eval", quiet=args.quiet)
    try:
        run = run_beir(
            paths,
            Path(args.beir),
            split=args.split,
            modes=modes,
            limit_queries=args.limit_queries,
            progress=progress,
            cancel=cancel_on_sigint(),
        )
    except BeirError as exc:
        raise ConfigError(str(exc)) from exc
    payload = asdict(run)
    exit_code = EXIT_OK
    if args.baseline:
        exit_code = _compare_beir(payload, Path(args.baseline), args.tolerance)
    if args.json:
        print_json(payload)
        return exit_code
    print(f"BEIR {run.dataset} ({run.split}): {run.queries} queries, {run.documents} docs, {run.chunks} chunks")
    print(f"index: {run.index_seconds:.1f} s keyword, {run.embed_seconds:.1f} s embeddings{' (re-used)' if run.reused_index else ''}")
    print(f"{'mode':<10}{'nDCG@10':>9}{'R@100':>8}{'MRR@10':>8}{'p50 ms':>9}{'p95 ms':>9}")
    for m in run.modes:
        note = "" if m.effective_mode == m.mode else f"  (ran as {m.effective_mode})"
        print(f"{m.mode:<10}{m.ndcg_at_10:>9.4f}{m.recall_at_100:>8.4f}{m.mrr_at_10:>8.4f}{m.query_p50_ms:>9.1f}{m.query_p95_ms:>9.1f}{note}")
    for w in run.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return exit_code


def _compare_beir(payload: dict[str, Any], baseline_path: Path, tolerance: float) -> int:
    try:
        base = json.loads(baseline_path.read_text("utf-8"))
        base_modes = {m["mode"]: m for m in base["modes"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{baseline_path}: not a `cairn eval --beir --json` report ({exc})") from exc
    degraded = False
    for m in payload["modes"]:
        old = base_modes.get(m["mode"])
        if old is None:
            continue
        for metric in ("ndcg_at_10", "recall_at_100", "mrr_at_10"):
            if m[metric] < old[metric] - tolerance:
                print(f"DEGRADED {m['mode']} {metric}: {old[metric]:.4f} → {m[metric]:.4f}", file=sys.stderr)
                degraded = True
    return EXIT_DEGRADED if degraded else EXIT_OK
