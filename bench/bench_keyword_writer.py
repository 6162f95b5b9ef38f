"""CPU seconds of the keyword writer's two halves on a real vault: analysing chunks, and filing them.

A cold index analyses each chunk (`FieldAnalyser.analyse`) and files the postings
(`KeywordIndex.apply`), in both processes of a parallel build. This times the analysis on its own,
and `apply` (which analyses the chunks it files, then files them) over the same parsed notes, in
CPU seconds (`time.process_time`), so a shared machine blurs the figures less than wall time.

    python bench/bench_keyword_writer.py --vault ../shared/data/vaults/tldr --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.index.field_analysis import FieldAnalyser  # noqa: E402
from core.index.keyword_index import KeywordIndex  # noqa: E402
from core.index.keyword_schema import build_schema, document_fields  # noqa: E402
from core.vault.chunk_limits import ChunkLimits  # noqa: E402
from core.vault.chunker import new_parser  # noqa: E402
from core.vault.links import new_link_parser  # noqa: E402
from core.vault.notes import parse_note  # noqa: E402

BATCH = 1000  # notes per commit, as the indexer's


def parsed_docs(vault: Path) -> list:
    parser, links = new_parser(), new_link_parser()
    docs = []
    for path in sorted(vault.rglob("*.md")):
        raw = path.read_bytes()
        rel = path.relative_to(vault).as_posix()
        docs.append(parse_note(vault.name, rel, raw, size=len(raw), mtime_ns=0, limits=ChunkLimits(1000, 2000), parser=parser, link_parser=links))
    return docs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    docs = parsed_docs(args.vault)
    rows = {doc.rel_path: document_fields(doc) for doc in docs}
    nchunks = sum(len(r) for r in rows.values())
    analyse_s, apply_s, bytes_s = [], [], []
    for _ in range(args.rounds):
        analyser = FieldAnalyser(build_schema())
        gc.collect()
        t0 = time.process_time()
        prepared = {rel: [(f, analyser.analyse(f, f["lang"])) for f in fields] for rel, fields in rows.items()}
        analyse_s.append(time.process_time() - t0)
        t0 = time.process_time()
        blob = pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL)
        prepared = pickle.loads(blob)
        bytes_s.append(time.process_time() - t0)
        with tempfile.TemporaryDirectory(prefix="kw-") as tmp:
            kw = KeywordIndex(Path(tmp))
            gc.collect()
            t0 = time.process_time()
            for i in range(0, len(docs), BATCH):
                kw.apply([], docs[i : i + BATCH])  # analyses the chunks itself
            apply_s.append(time.process_time() - t0)
            kw.close()
            size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{args.vault.name}: {len(docs)} notes, {nchunks} chunks, pickled rows {len(blob) / 1e6:.1f} MB; "
        f"analyse {statistics.median(analyse_s):.2f} s CPU (min {min(analyse_s):.2f}), "
        f"pickle round trip {statistics.median(bytes_s):.2f} s, "
        f"apply (analysis included) {statistics.median(apply_s):.2f} s CPU (min {min(apply_s):.2f}), index {size / 1e6:.1f} MB; load {load:.2f}"
    )


if __name__ == "__main__":
    main()
