"""Retrieval quality beside SciFact: every golden file that names a real vault, in every mode.

Writes bench/out/quality.json with note-level Recall@1/3/10, MRR@10 and nDCG@10 per
golden file and mode, plus SciFact train nDCG@10 when the dataset is found. Indexes
live in a cache folder (``--home``, default bench/out/quality-home) so a second run
re-uses them; vaults are only read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT, REPO, machine  # noqa: E402

from core.base.paths import AppPaths  # noqa: E402
from core.eval.golden import GoldenFileError, load_golden  # noqa: E402
from core.eval.runner import GOLDEN_VAULT, golden_engine, run_beir, run_golden  # noqa: E402

MODES = ("keyword", "semantic", "hybrid")
METRICS = ("recall@1", "recall@3", "recall@10", "mrr@10", "ndcg@10")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden", nargs="*", default=["til.yaml", "tldr-en.yaml"], help="golden files in tests/golden/")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--home", type=Path, default=OUT / "quality-home")
    ap.add_argument("--scifact", type=Path, default=None, help="BEIR SciFact folder (default: shared/data/scifact beside the repo)")
    ap.add_argument("--no-scifact", action="store_true")
    args = ap.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    paths = AppPaths(args.home)
    out: dict = {"machine": machine(), "golden": {}, "scifact_train": None}  # type: ignore[type-arg]
    for name in args.golden:
        golden = load_golden(REPO / "tests" / "golden" / name)
        try:
            vault = golden.resolve_vault()
        except GoldenFileError as exc:
            print(f"skip {name}: {exc}", file=sys.stderr)
            continue
        if vault is None:
            continue
        engine = golden_engine(paths, vault, embed=any(m != "keyword" for m in modes))
        rows = {}
        for mode in modes:
            report = run_golden(engine, golden, mode=mode, k=10, vault=GOLDEN_VAULT)
            rows[mode] = {m: round(report.overall.get(m) or 0.0, 4) for m in METRICS} | report.timings
            print(f"{name:<14} {mode:<9} " + "  ".join(f"{m} {rows[mode][m]:.3f}" for m in METRICS), flush=True)
        engine.close()
        out["golden"][name] = {"cases": len(golden.cases), "modes": rows}
    scifact = args.scifact or next((p / "shared" / "data" / "scifact" for p in REPO.parents if (p / "shared" / "data" / "scifact").is_dir()), None)
    if scifact is not None and not args.no_scifact:
        run = run_beir(paths, scifact, split="train", modes=modes)
        out["scifact_train"] = {m.mode: {"ndcg@10": m.ndcg_at_10, "recall@100": m.recall_at_100, "mrr@10": m.mrr_at_10} for m in run.modes}
        for m in run.modes:
            print(f"scifact-train  {m.mode:<9} nDCG@10 {m.ndcg_at_10:.4f}  R@100 {m.recall_at_100:.4f}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "quality.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
