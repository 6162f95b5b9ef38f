"""The opt-in LLM rerank on the golden sets: note-level Recall@1/3 and MRR@10 before and after.

Needs an OpenAI-compatible server (e.g. `python -m llama_cpp.server --model GGUF --model_alias
smollm2 --port 18977 --n_ctx 4096`). Indexes live in ``--home``'s cache (the `cairn eval` layout),
so a home where `cairn eval` already ran re-uses its index and embeddings.

    python bench/bench_llm_rerank.py --base-url http://127.0.0.1:18977 --model smollm2 --golden til.yaml
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.answer.rerank import rerank  # noqa: E402
from core.base.paths import AppPaths  # noqa: E402
from core.eval.golden import load_golden  # noqa: E402
from core.eval.metrics import mrr_at_k, recall_at_k  # noqa: E402
from core.eval.runner import golden_engine  # noqa: E402
from core.providers.llm import OpenAIChat  # noqa: E402
from core.search.search import SearchRequest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    return {"recall@1": recall_at_k(ranked, relevant, 1), "recall@3": recall_at_k(ranked, relevant, 3), "mrr@10": mrr_at_k(ranked, relevant, 10)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--golden", default="til.yaml")
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--limit", type=int, default=None, help="only the first N cases")
    ap.add_argument("--home", type=Path, required=True)
    args = ap.parse_args(argv)
    golden = load_golden(REPO / "tests" / "golden" / args.golden)
    vault = golden.resolve_vault()
    assert vault is not None
    engine = golden_engine(AppPaths(args.home), vault, embed=args.mode != "keyword")
    model = OpenAIChat(args.base_url, args.model, max_retries=0, timeout=120.0)
    before: list[dict[str, float]] = []
    after: list[dict[str, float]] = []
    times: list[float] = []
    statuses: dict[str, int] = {}
    for case in golden.cases[: args.limit]:
        relevant = set(case.must_include_source_paths) or set(case.graded_relevance())
        hits = engine.search(SearchRequest(case.query, mode=args.mode, k=10, per_note_cap=1)).hits
        result = rerank(case.query, hits, model, timeout_s=120.0)
        statuses[result.status] = statuses.get(result.status, 0) + 1
        times.append(result.ms)
        before.append(_metrics([h.chunk.rel_path for h in hits], relevant))
        after.append(_metrics([h.chunk.rel_path for h in result.hits], relevant))
        print(case.id, result.status, round(result.ms), before[-1]["mrr@10"], "->", after[-1]["mrr@10"], flush=True)
    mean = lambda rows, key: round(statistics.fmean(r[key] for r in rows), 3)  # noqa: E731
    out = {
        "golden": args.golden,
        "mode": args.mode,
        "cases": len(before),
        "model": args.model,
        "before": {k: mean(before, k) for k in before[0]},
        "after": {k: mean(after, k) for k in after[0]},
        "rerank_ms_p50": round(statistics.median(times)),
        "statuses": statuses,
    }
    print(json.dumps(out, indent=2))
    engine.close()
    model.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
