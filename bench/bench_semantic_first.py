"""Semantic search in the first minute: how soon after adding a vault every note can be found by meaning.

A just-added vault is keyword-indexed and then embedded with the real bundled model, every
note's opening passage first (`core.index.vector_store`), then the other passages. The clock
starts when the vault is added; the figures are the times until (a) keyword search is ready,
(b) every note has a vector (note-level semantic and hybrid search cover the vault), and
(c) every chunk is embedded (with --whole).

With --golden FILE the vault is the golden set's own; its questions are run in semantic and
hybrid mode at (b) and again at (c), so the recall given up by searching early shows.

    python bench/bench_semantic_first.py --notes 1000 --shape obsidian --whole
    python bench/bench_semantic_first.py --golden tests/golden/obsidian-tasks-docs.yaml
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write_result  # noqa: E402
from synth_vault import generate_vault  # noqa: E402

from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.index.embed_text import NO_VECTOR  # noqa: E402

try:  # the first pass's own phase; absent from code before it (`--baseline` runs of older checkouts)
    from core.index.note_vectors import NOTE_PHASE  # noqa: E402
except ImportError:
    NOTE_PHASE = "embedding"


def _spread_mtimes(vault: Path) -> None:
    notes = sorted(vault.rglob("*.md"))
    for i, note in enumerate(notes):  # edits spread over a year, in an order unrelated to the names
        stamp = 1_700_000_000 + ((i * 7919) % len(notes)) * 30_000
        os.utime(note, (stamp, stamp))


def _every_note_has_a_vector(engine: Engine, name: str) -> bool:
    vv = engine.vectors_for(name)
    if vv is None:
        return False
    covered = {rel for rel, _ in (vv._rows_to_chunk.get(k, ("", 0)) for k in vv.key_hash)}
    files = engine.index_for(name).files
    return all(rel in covered for rel, rec in files.items() if any(not c.text_hash.startswith(NO_VECTOR) for c in rec.chunks))


def embed_in_two_steps(engine: Engine, name: str, t0: float, whole: bool, at_notes: object = None) -> dict[str, float | None]:
    """Embed until every note has a vector (then call `at_notes`), then the rest if `whole`."""
    marks: dict[str, float] = {}
    cancel = threading.Event()

    def progress(done: int, total: int, phase: str) -> None:
        if phase in ("embedding", NOTE_PHASE) and "notes" not in marks and _every_note_has_a_vector(engine, name):
            marks["notes"] = time.perf_counter() - t0
            cancel.set()

    engine.embed_vault(name, progress=progress, cancel=cancel)
    if callable(at_notes):
        at_notes()
    whole_s = None
    if whole:
        engine.embed_vault(name)
        whole_s = time.perf_counter() - t0
    return {"note_level_ready_s": marks.get("notes"), "all_chunks_embedded_s": whole_s}


def synthetic(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="cairn-first-") as tmp:
        vault = Path(tmp) / "vault"
        generate_vault(vault, args.notes, seed=7, shape=args.shape)
        _spread_mtimes(vault)
        engine = Engine(AppPaths(Path(tmp) / "home"))
        t0 = time.perf_counter()
        name = engine.add_vault(vault, name="bench").name
        engine.sync([name], embed=False)
        keyword_s = time.perf_counter() - t0
        marks = embed_in_two_steps(engine, name, t0, args.whole)
        chunks = sum(len(rec.chunks) for rec in engine.index_for(name).files.values())
        engine.close()
    return {"notes": args.notes, "shape": args.shape, "chunks": chunks, "keyword_ready_s": round(keyword_s, 1), **marks}


def golden_run(args: argparse.Namespace) -> dict[str, object]:
    from core.eval.golden import load_golden
    from core.eval.runner import GOLDEN_VAULT, run_golden

    golden = load_golden(Path(args.golden))
    vault_dir = golden.resolve_vault()
    recall: dict[str, float] = {}

    def measure(stage: str) -> None:
        for mode in ("semantic", "hybrid"):
            report = run_golden(engine, golden, mode=mode, k=10, vault=GOLDEN_VAULT)
            recall[f"{stage}_{mode}_recall@3"] = round(float(report.overall.get("recall@3") or 0.0), 3)

    with tempfile.TemporaryDirectory(prefix="cairn-first-") as tmp:
        engine = Engine(AppPaths(Path(tmp) / "home"))
        t0 = time.perf_counter()
        engine.add_vault(vault_dir, name=GOLDEN_VAULT)
        engine.sync([GOLDEN_VAULT], embed=False)
        keyword_s = time.perf_counter() - t0
        marks = embed_in_two_steps(engine, GOLDEN_VAULT, t0, True, at_notes=lambda: measure("note_level"))
        measure("all_chunks")
        engine.close()
    return {"golden": args.golden, "keyword_ready_s": round(keyword_s, 1), **marks, **recall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--shape", choices=("plain", "obsidian"), default="obsidian")
    ap.add_argument("--whole", action="store_true", help="also embed every other passage and time it")
    ap.add_argument("--golden", help="a golden file: its vault, and its questions at note level and at the end")
    args = ap.parse_args()
    result = golden_run(args) if args.golden else synthetic(args)
    result["load_average"] = os.getloadavg()[0]
    for key, value in result.items():
        print(f"{key}: {value}")
    write_result("semantic_first", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
