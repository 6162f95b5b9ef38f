"""Run every benchmark, print one table, write bench/out/summary.json.

`make bench` runs this with the full sizes; `--quick` uses small ones to check
that everything still runs. Each figure is printed with the machine it ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT, machine  # noqa: E402

HERE = Path(__file__).resolve().parent

FULL = {
    "keyword": ["--synthetic", "1000", "10000"],
    "embed": ["--docs", "150"],
    "query": ["--notes", "4000", "40000"],
    "live": ["--notes", "10000", "--edits", "30"],
    "torture": ["--trials", "100"],
    "ui": ["--notes", "10000"],
    "quality": [],
    "recoll": ["--rounds", "2"],
    "memory": ["--notes", "10000"],
    "semantic_first": ["--notes", "1000"],
    "cli_start": [],
    "embed_threads": [],
    "agents": ["--notes", "10000", "--no-embed", "--burst", "1000"],
}
QUICK = {
    "keyword": ["--synthetic", "500"],
    "embed": ["--docs", "20"],
    "query": ["--notes", "500"],
    "live": ["--notes", "500", "--edits", "5"],
    "torture": ["--trials", "5"],
    "ui": ["--notes", "500", "--embed-seconds", "5"],
    "quality": ["--modes", "keyword", "--no-scifact"],
    "recoll": ["--rounds", "1"],
    "memory": ["--notes", "500"],
    "semantic_first": ["--notes", "200", "--newest", "20"],
    "agents": ["--notes", "200", "--no-embed", "--agents", "2", "--calls", "10", "--burst", "50"],
}
SCRIPTS = {
    "keyword": "bench_keyword.py",
    "embed": "bench_embed.py",
    "query": "bench_query.py",
    "live": "bench_live.py",
    "torture": "torture.py",
    "ui": "bench_ui.py",
    "quality": "bench_quality.py",
    "recoll": "bench_recoll.py",
    "memory": "bench_memory.py",
    "semantic_first": "bench_semantic_first.py",
    "cli_start": "bench_cli_start.py",
    "embed_threads": "bench_embed_threads.py",
    "agents": "bench_agents.py",
}


def _get(d: dict, *keys: str) -> object:  # type: ignore[type-arg]
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def headline(results: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    """The README's figures, read from whatever JSON the scripts wrote (missing ones say so)."""
    rows: list[tuple[str, str]] = []
    kw = _get(results, "keyword", "results") or {}
    for name, r in kw.items():  # type: ignore[union-attr]
        speed = f"{r['cold_index_s']} s cold, {r['unchanged_reindex_s']} s unchanged, {r['files_rewritten']} files rewritten"
        rows.append((f"keyword index {name} ({r['notes']} notes)", speed))
        rows.append((f"keyword query {name}", f"p50 {r['query']['p50_ms']} ms, p95 {r['query']['p95_ms']} ms"))
    for name, r in (_get(results, "query", "results") or {}).items():  # type: ignore[union-attr]
        if "hybrid" in r:
            rows.append((f"hybrid query at {name}", f"p50 {r['hybrid']['p50_ms']} ms, p95 {r['hybrid']['p95_ms']} ms"))
        elif "numpy_over_usearch_p50" in r:
            rows.append((f"numpy exact / usearch HNSW at {r['vectors']} vectors", f"{r['numpy_over_usearch_p50']}x"))
    emb = results.get("embedding") or {}
    if emb:
        ratio = f"{emb['pipeline_chunks_per_s']} vs {emb['bare_chunks_per_s']} chunks/s ({emb['pipeline_vs_bare']:.0%})"
        rows.append(("embedding pipeline vs bare model", ratio))
        rows.append(("re-embedded on an unchanged restart", str(emb["unchanged_resync_embedded"])))
    for name, r in results.items():
        if name.startswith("live"):
            e2e = _get(r, "b_end_to_end", "save_to_keyword_searchable_minus_debounce") or {}
            rows.append((f"edit -> searchable after the debounce ({name})", f"p50 {e2e.get('p50_ms')} ms, p95 {e2e.get('p95_ms')} ms"))
        if name.startswith("ui"):
            rows.append((f"UI max stall while indexing ({name})", f"{_get(r, 'stalls', 'keyword', 'max_gap_ms')} ms"))
    rows.extend(_quality_rows(results))
    for name, r in results.items():
        rows.append((f"peak RSS ({name})", f"{r.get('peak_rss_mib')} MiB"))
    return rows


def _quality_rows(results: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    """Golden sets, SciFact and the kill -9 torture run."""
    rows: list[tuple[str, str]] = []
    for name, g in (_get(results, "quality", "golden") or {}).items():  # type: ignore[union-attr]
        for mode, r in g["modes"].items():
            figures = f"R@1 {r['recall@1']:.3f}, R@3 {r['recall@3']:.3f}, R@10 {r['recall@10']:.3f}, MRR@10 {r['mrr@10']:.3f}"
            rows.append((f"golden {name} {mode} ({g['cases']} cases)", figures))
    for mode, r in (_get(results, "quality", "scifact_train") or {}).items():  # type: ignore[union-attr]
        rows.append((f"SciFact train {mode}", f"nDCG@10 {r['ndcg@10']:.4f}, R@100 {r['recall@100']:.4f}"))
    for name, r in results.items():
        if name.startswith("bench_agents"):
            calls = f"{r['agents']} agents x {r['calls_per_agent']} calls, {sum(r['errors'].values())} errors"
            rows.append((f"shared MCP server ({r['notes']} notes)", f"{calls}; RSS +{r['rss_server_on_idle_mib'] - r['rss_server_off_mib']:.1f} MiB idle"))
    tort = _get(results, "torture", "summary") or {}
    if tort:
        rows.append(("kill -9 torture", f"{tort['recovered_of_total']} recovered, {tort['full_rebuilds']} full rebuilds"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="*", default=list(SCRIPTS))
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    failures = []
    for name in args.only:
        script = HERE / SCRIPTS[name]
        if not script.exists():
            print(f"skip {name}: {script.name} missing", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        print(f"== {name}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, str(script), *plan.get(name, [])], env=env)
        if done.returncode != 0:
            failures.append(name)
        print(f"== {name} done in {time.perf_counter() - t0:.0f} s (exit {done.returncode})", file=sys.stderr)
    summary = {"machine": machine(), "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None, "results": {}}
    for path in sorted(OUT.glob("*.json")):
        if path.name != "summary.json":
            summary["results"][path.stem] = json.loads(path.read_text())
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    m = summary["machine"]
    print(f"\nMachine: {m['cores']} cores, {m['cpu']}, {m['memory_gib']} GiB, Python {m['python']}")
    print(f"{'figure':<58} value")
    for label, value in headline(summary["results"]):
        print(f"{label:<58} {value}")
    print(f"written {OUT / 'summary.json'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
