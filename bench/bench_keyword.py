"""Keyword indexing and search: SciFact as notes, and synthetic vaults.

Prints notes/s for a cold keyword index, the cost of re-indexing an unchanged
vault (which must rewrite nothing), and keyword query latency.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SCIFACT, snapshot, summary_ms, write_result  # noqa: E402

from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.eval.beir import load_beir, write_corpus_as_notes  # noqa: E402
from core.search.search import SearchRequest  # noqa: E402


def bench_vault(vault: Path, home: Path, queries: list[str]) -> dict[str, object]:
    engine = Engine(AppPaths(home), embedder_factory=None)
    name = engine.add_vault(vault, name="bench").name
    t0 = time.perf_counter()
    report = engine.sync([name], embed=False)[0].keyword
    cold = time.perf_counter() - t0
    before = snapshot(engine.paths.vault_dir(name))
    engine.close()
    engine = Engine(AppPaths(home), embedder_factory=None)  # a fresh start, like a relaunch
    t0 = time.perf_counter()
    again = engine.sync([name], embed=False)[0].keyword
    warm = time.perf_counter() - t0
    rewritten = sum(1 for k, v in snapshot(engine.paths.vault_dir(name)).items() if before.get(k) != v)
    latencies = []
    for q in queries:
        t = time.perf_counter()
        engine.search(SearchRequest(q, mode="keyword", k=10))
        latencies.append((time.perf_counter() - t) * 1000)
    return {
        "notes": report.documents,
        "chunks": report.chunks,
        "cold_index_s": round(cold, 2),
        "notes_per_s": round(report.documents / cold, 1),
        "unchanged_reindex_s": round(warm, 3),
        "unchanged_reparsed": again.added + again.changed,
        "files_rewritten": rewritten,
        "query": summary_ms(latencies),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--synthetic", type=int, nargs="*", default=[1000, 10000], help="synthetic vault sizes")
    args = ap.parse_args(argv)
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if (SCIFACT / "corpus.jsonl").exists():
            ds = load_beir(SCIFACT, "train")
            notes = root / "scifact"
            write_corpus_as_notes(ds, notes)
            results["scifact"] = bench_vault(notes, root / "home-scifact", [q.text for q in ds.queries][:400])
        from synth_vault import generate_vault

        for n in args.synthetic:
            vault = root / f"synth-{n}"
            generate_vault(vault, n, seed=7)
            words = ["backup schedule", "release checklist", "vector index latency", "garden recipe", "kernel driver bug"]
            results[f"synthetic_{n}"] = bench_vault(vault, root / f"home-{n}", words * 40)
    path = write_result("keyword", {"results": results})
    print(json.dumps(results, indent=2))
    print(f"written {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
