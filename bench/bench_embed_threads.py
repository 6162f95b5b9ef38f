"""Both cores for embeddings: one session with 2 intra-op threads, or two 1-thread sessions?

Issue #21 asks which of the two uses a 2-core laptop better. Same texts (real
chunks of simonw-til), same embedder code; the variants run interleaved A B A B
so a noisy machine hurts both alike, and medians of chunks/s are reported.

- `one-x2`: `MiniLMEmbedder(intra_op_threads=2, sessions=1)`, the old default;
- `two-x1`: `MiniLMEmbedder()` (1 thread, 2 sessions), the default since: two
  sessions take batches from one queue, each on its own thread (onnxruntime runs
  outside the GIL);
- `bare`: the model with no Cairn around it (one 2-thread session, batch 1), as
  `bench_embed.py` reports it, in the same run.

    python bench/bench_embed_threads.py --texts 160 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from common import REPO, write_result  # noqa: E402

from core.providers.embedding import MiniLMEmbedder  # noqa: E402
from core.vault.notes import parse_note  # noqa: E402

TIL = REPO.parent / "shared" / "data" / "vaults" / "simonw-til"


def real_chunks(n: int) -> list[str]:
    root = TIL if TIL.is_dir() else REPO.parent.parent / "shared" / "data" / "vaults" / "simonw-til"
    texts: list[str] = []
    for path in sorted(root.rglob("*.md")):
        raw = path.read_bytes()
        doc = parse_note("til", path.relative_to(root).as_posix(), raw, size=len(raw), mtime_ns=0)
        texts.extend(c.text for c in doc.chunks)
        if len(texts) >= n:
            break
    return texts[:n]


def bare(emb: MiniLMEmbedder, texts: list[str]) -> None:
    for text in texts:  # batch 1, the bare loop of bench_embed.py
        emb.embed_documents([text])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=160)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    texts = real_chunks(args.texts)
    one = MiniLMEmbedder(intra_op_threads=2, sessions=1)
    two = MiniLMEmbedder()
    a, b = one.embed_documents(texts[:40]), two.embed_documents(texts[:40])  # warm-up, and the same vectors
    assert float(np.min(np.sum(a * b, axis=1))) > 0.999
    rates: dict[str, list[float]] = {"one-x2": [], "two-x1": [], "bare": []}
    variants = (
        ("one-x2", lambda: one.embed_documents(texts)),
        ("two-x1", lambda: two.embed_documents(texts)),
        ("bare", lambda: bare(one, texts)),
    )
    for _ in range(args.rounds):
        for name, fn in variants:
            t0 = time.perf_counter()
            fn()
            rates[name].append(len(texts) / (time.perf_counter() - t0))
            print(f"{name}: {rates[name][-1]:.1f} chunks/s", file=sys.stderr)
    result = {name: {"median_chunks_s": round(statistics.median(v), 1), "runs": [round(x, 1) for x in v]} for name, v in rates.items()}
    for name, r in result.items():
        print(f"{name}: median {r['median_chunks_s']} chunks/s over {len(r['runs'])} runs")
    write_result("embed_threads", {"texts": len(texts), "results": result})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
