"""Semantic where it matters first: how soon after adding a vault its newest notes are embedded.

A just-added vault of N notes (synthetic, with spread-out modification times) is keyword-
indexed and then embedded with the real bundled model. The clock starts when the vault is
added; the figure is the time until the 100 most recently edited notes have every chunk
embedded (target: within 30 s for a 1,000-note vault), beside the time for the whole vault.

    python bench/bench_semantic_first.py --notes 1000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write_result  # noqa: E402
from synth_vault import generate_vault  # noqa: E402

from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--newest", type=int, default=100)
    ap.add_argument("--whole", action="store_true", help="also embed the rest of the vault and time it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cairn-first-") as tmp:
        vault = Path(tmp) / "vault"
        generate_vault(vault, args.notes, seed=7)
        notes = sorted(p for p in vault.rglob("*.md"))
        for i, note in enumerate(notes):  # spread edits over a year, in an order unrelated to the names
            stamp = 1_700_000_000 + ((i * 7919) % len(notes)) * 30_000
            os.utime(note, (stamp, stamp))
        newest = {p.relative_to(vault).as_posix() for p in sorted(notes, key=lambda p: -p.stat().st_mtime)[: args.newest]}
        engine = Engine(AppPaths(Path(tmp) / "home"))
        t0 = time.perf_counter()
        name = engine.add_vault(vault, name="bench").name
        engine.sync([name], embed=False)
        keyword_s = time.perf_counter() - t0
        marks: dict[str, float] = {}

        def progress(done: int, total: int, phase: str) -> None:
            if "newest" in marks or phase != "embedding":
                return
            vv = engine.vectors_for(name)
            if vv is None:
                return
            files = engine.index_for(name).files
            covered = {rel for rel, _ in (vv._rows_to_chunk.get(k, ("", 0)) for k in vv.key_hash)}
            if all(rel in covered for rel in newest if files.get(rel) and files[rel].chunks):
                marks["newest"] = time.perf_counter() - t0

        import threading

        cancel = threading.Event()

        def stop_when_newest_done(done: int, total: int, phase: str) -> None:
            progress(done, total, phase)
            if "newest" in marks and not args.whole:
                cancel.set()

        stats = engine.embed_vault(name, progress=stop_when_newest_done, cancel=cancel)
        whole_s = time.perf_counter() - t0 if args.whole else None
        engine.close()
    result = {
        "notes": args.notes,
        "keyword_index_s": round(keyword_s, 1),
        f"newest_{args.newest}_embedded_s": round(marks.get("newest", float("nan")), 1),
        "whole_vault_embedded_s": None if whole_s is None else round(whole_s, 1),
        "chunks_desired": stats.desired if stats else None,
    }
    print(
        f"{args.notes} notes: keyword index {keyword_s:.1f} s; the {args.newest} most recently edited notes embedded "
        f"{marks.get('newest', float('nan')):.1f} s after the vault was added"
        + (f"; whole vault {whole_s:.1f} s" if whole_s else "")
    )
    write_result("semantic_first", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
