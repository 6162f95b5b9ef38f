"""Embedding throughput: the bare ONNX model against Cairn's pipeline, same texts.

The bare loop is what the model costs with no Cairn around it (tokenize,
run, pool, normalise, batch 1); the pipeline is `Engine.embed_vault` over the
same texts as chunks of a vault, cache and vector index included.
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
from common import SCIFACT, write_result  # noqa: E402

from core.base.models import chunk_id  # noqa: E402
from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.eval.beir import load_beir, write_corpus_as_notes  # noqa: E402
from core.index.embed_text import embedding_input  # noqa: E402
from core.providers.embedding import create_embedder  # noqa: E402


def bare_throughput(texts: list[str]) -> float:
    from tokenizers import Tokenizer

    from core.base.native import load_onnxruntime

    ort = load_onnxruntime()
    emb = create_embedder("builtin")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(emb.model_path), opts, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    tok = Tokenizer.from_file(str(emb.tokenizer_path))  # type: ignore[attr-defined]
    tok.enable_truncation(max_length=256)
    t0 = time.perf_counter()
    for text in texts:
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        out = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (out * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    return len(texts) / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=150, help="SciFact abstracts to use")
    args = ap.parse_args(argv)
    ds = load_beir(SCIFACT, "train")
    with tempfile.TemporaryDirectory() as tmp:
        sub = type(ds)(ds.name, ds.split, ds.docs[: args.docs], ds.queries, ds.qrels)
        notes = Path(tmp) / "notes"
        write_corpus_as_notes(sub, notes)
        engine = Engine(AppPaths(Path(tmp) / "home"))
        name = engine.add_vault(notes).name
        engine.sync([name], embed=False)
        vi = engine.index_for(name)
        refs = [(rel, c.ordinal, rec.title) for rel, rec in vi.files.items() for c in rec.chunks]
        stored = vi.keyword.stored([chunk_id(name, r, o) for r, o, _ in refs])
        texts = [embedding_input(t, f.heading_path, f.body) for (r, o, t), f in zip(refs, stored.values())]
        engine.vectors_for(name)
        own = engine.embedder_for(engine.vault(name))  # the pipeline's own model, loaded outside the timed part
        assert own is not None
        own.embed_query("warm up")  # as the bare loop's session is built before its clock starts
        bare = bare_throughput(texts)
        t0 = time.perf_counter()
        stats = engine.embed_vault(name)
        pipeline_s = time.perf_counter() - t0
        assert stats is not None
        pipeline = stats.embedded / pipeline_s
        again = engine.sync([name])[0].embedding
    result = {
        "chunks": len(texts),
        "bare_chunks_per_s": round(bare, 1),
        "pipeline_chunks_per_s": round(pipeline, 1),
        "pipeline_vs_bare": round(pipeline / bare, 3),
        "unchanged_resync_embedded": again.embedded if again else None,
    }
    path = write_result("embedding", result)
    print(json.dumps(result, indent=2))
    print(f"written {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
