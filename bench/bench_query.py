"""Query latency per mode at 10k and 100k chunks, and vector search: usearch vs numpy.

The keyword side indexes a synthetic vault for real. Embedding 100k chunks
with the offline model would take over half an hour on 2 cores, so the
vector side is filled with seeded random unit vectors (the search cost does
not depend on what the vectors mean); the query embedding is the real model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import summary_ms, write_result  # noqa: E402

from core.base.models import chunk_id  # noqa: E402
from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.index.vector_index import VectorIndex, key_for  # noqa: E402
from core.search.search import SearchRequest  # noqa: E402

QUERIES = [
    "backup schedule for the server",
    "release checklist and deploy steps",
    "vector index latency budget",
    "garden recipe with tomatoes",
    "kernel driver bug patch branch",
    "meeting notes about the roadmap and customer feedback",
    "how do we rotate the password for the database account",
    "travel flight hotel invoice",
]


def fill_random_vectors(engine: Engine, name: str, seed: int = 11) -> int:
    vv = engine.vectors_for(name)
    assert vv is not None
    files = engine.index_for(name).files
    keys, hashes = [], []
    for rel, rec in files.items():
        for c in rec.chunks:
            keys.append(key_for(chunk_id(name, rel, c.ordinal)))
            hashes.append(c.text_hash)
    rng = np.random.default_rng(seed)
    for start in range(0, len(keys), 20_000):
        block = rng.standard_normal((len(keys[start : start + 20_000]), vv.model.dims)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        vv.index.add(keys[start : start + 20_000], block)
    vv.key_hash.update(dict(zip(keys, hashes)))
    vv.bind(files)
    vv.status = "ok"
    return len(keys)


def measure(engine: Engine, reps: int) -> dict[str, dict[str, float]]:
    """Latency per mode; "hybrid_no_feedback" is hybrid without the keyword side's feedback search."""
    out = {}
    for label, mode, feedback in (
        ("keyword", "keyword", True),
        ("semantic", "semantic", True),
        ("hybrid", "hybrid", True),
        ("hybrid_no_feedback", "hybrid", False),
    ):
        for q in QUERIES[:2]:
            engine.search(SearchRequest(q, mode=mode, feedback=feedback))  # warm caches
        lat = []
        for _ in range(reps):
            for q in QUERIES:
                t0 = time.perf_counter()
                resp = engine.search(SearchRequest(q, mode=mode, feedback=feedback))
                lat.append((time.perf_counter() - t0) * 1000)
                assert resp.mode == mode, resp.warnings
        out[label] = summary_ms(lat)
    return out


def vector_baseline(n: int, dims: int = 384, queries: int = 50) -> dict[str, object]:
    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((n, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    qs = vecs[rng.choice(n, queries, replace=False)] + 0.01
    hnsw = VectorIndex(dims, exact_below=1)
    hnsw.add(range(1, n + 1), vecs)
    t_numpy, t_usearch, recall = [], [], 0
    for q in qs:
        t0 = time.perf_counter()
        scores = vecs @ q
        top = np.argpartition(-scores, 10)[:10]
        t_numpy.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        found = hnsw.search(q, 10)
        t_usearch.append((time.perf_counter() - t0) * 1000)
        recall += len({int(k) - 1 for k, _ in found} & set(int(i) for i in top))
    np_ms, us_ms = summary_ms(t_numpy), summary_ms(t_usearch)
    return {
        "vectors": n,
        "numpy_exact": np_ms,
        "usearch_hnsw": us_ms,
        "recall_at_10": round(recall / (10 * len(qs)), 3),
        "numpy_over_usearch_p50": round(np_ms["p50_ms"] / max(us_ms["p50_ms"], 1e-6), 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, nargs="*", default=[4000, 40000], help="synthetic vault sizes (~2.5 chunks a note)")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    from synth_vault import generate_vault

    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.notes:
            vault = Path(tmp) / f"v{n}"
            generate_vault(vault, n, seed=7)
            engine = Engine(AppPaths(Path(tmp) / f"h{n}"))
            name = engine.add_vault(vault).name
            t0 = time.perf_counter()
            engine.sync([name], embed=False)
            index_s = time.perf_counter() - t0
            chunks = fill_random_vectors(engine, name)
            results[f"{chunks}_chunks"] = {"notes": n, "chunks": chunks, "keyword_index_s": round(index_s, 1), **measure(engine, args.reps)}
            engine.close()
    for n in (10_000, 100_000):
        results[f"vector_baseline_{n}"] = vector_baseline(n)
    path = write_result("query", {"results": results})
    print(json.dumps(results, indent=2))
    print(f"written {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
