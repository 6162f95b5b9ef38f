"""A big vault end to end: indexed cold, opened, searched and edited with the watcher running.

The full tldr pages (~38k notes in ~40 languages) are approximated by copies of a real vault
side by side (`--copies` of `--source`, default the shared tldr pages: 6,417 notes in four
languages, so six copies make ~38.5k notes of tldr's sizes and markup), or by a generated vault
(`--notes N`). Figures:

  - cold keyword index (`sync(embed=False)`, the app's bulk path: a child process builds it);
  - opening it in a fresh engine, up to its first keyword search;
  - keyword and hybrid search p50/p95 over the vault's own command names. Embedding ~40k notes
    would take hours here, so every chunk gets a seeded random unit vector (as `bench_memory.py`
    does; search cost does not depend on what the vectors mean) and the real model embeds
    the queries;
  - edit -> keyword-searchable through a real `VaultWatcher` (1 s debounce), p50/p95/p99: each
    edit appends a unique word to a random note (`bench_live.py`'s measure), and the edited
    note's chunks are embedded with the real model as the app does.

    python bench/bench_big_vault.py --copies 6 --edits 60
    python bench/bench_big_vault.py --notes 40000 --work /tmp/big   # a generated vault, kept
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from bench_live import VAULT, _through_watcher, whoosh_segments  # noqa: E402
from bench_query import fill_random_vectors  # noqa: E402
from common import REPO, machine, percentile, summary_ms, write_result  # noqa: E402

from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.search.search import SearchRequest  # noqa: E402

# The shared data sit beside the checkout (../shared), or beside the worktrees' folder.
TLDR = next((p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()), REPO.parent / "shared") / "data" / "vaults" / "tldr"


def make_vault(root: Path, source: Path, copies: int, notes: int | None) -> None:
    """`copies` of `source` side by side (c0/, c1/, ...), or a generated vault of `notes` notes."""
    if root.exists():
        return
    if notes:
        from synth_vault import generate_vault

        generate_vault(root, notes, seed=7)
        return
    for i in range(copies):
        shutil.copytree(source, root / f"c{i}", ignore=shutil.ignore_patterns(".*"))


def queries(engine: Engine, n: int, seed: int = 5) -> list[str]:
    """Words people search tldr for: the titles of random notes (command names), plus a verb."""
    titles = sorted({rec.title for rec in engine.index_for(VAULT).files.values() if rec.title})
    rng = random.Random(seed)
    verbs = ("list", "show", "delete", "create", "copy", "find", "update", "start")
    return [f"{rng.choice(verbs)} {title}" for title in rng.sample(titles, min(n, len(titles)))]


def search_latency(engine: Engine, qs: list[str], mode: str) -> dict[str, float]:
    for q in qs[:3]:
        engine.search(SearchRequest(q, mode=mode))  # caches warm, the model loaded
    lat = []
    for q in qs:
        t = time.perf_counter()
        resp = engine.search(SearchRequest(q, mode=mode))
        lat.append((time.perf_counter() - t) * 1000)
        assert resp.mode == mode, resp.warnings
    return summary_ms(lat)


def open_and_search(home: Path) -> tuple[float, float, Engine]:
    """A fresh engine on the built index: seconds to open it, then to answer its first keyword search."""
    t = time.perf_counter()
    engine = Engine(AppPaths(home))
    engine.index_for(VAULT)
    opened = time.perf_counter() - t
    engine.search(SearchRequest("list files", mode="keyword"))
    return opened, time.perf_counter() - t, engine


def edits(engine: Engine, root: Path, n: int, seed: int) -> dict[str, object]:
    """Edit -> searchable through a running watcher (see `bench_live._through_watcher`)."""
    keyword = engine.index_for(VAULT).keyword
    committed: list[float] = []
    real_apply = keyword.apply

    def timed_apply(removed, added):
        real_apply(removed, added)
        committed.append(time.perf_counter())

    keyword.apply = timed_apply  # type: ignore[method-assign]
    before = whoosh_segments(engine)
    sample = random.Random(seed).sample(sorted(engine.index_for(VAULT).files), n)
    try:
        searchable, reported, processing, _ = _through_watcher(engine, root, sample, committed)
    finally:
        keyword.apply = real_apply  # type: ignore[method-assign]
    minus = [v - 1000 for v in searchable]
    return {
        "save_to_keyword_searchable": {**summary_ms(searchable), "p99_ms": round(percentile(searchable, 99), 1), "max_ms": round(max(searchable), 1)},
        "minus_debounce": {**summary_ms(minus), "p99_ms": round(percentile(minus, 99), 1)},
        "save_to_reported_with_embeddings": {**summary_ms(reported), "p99_ms": round(percentile(reported, 99), 1)},
        "watcher_processing_ms": {**summary_ms(processing), "p99_ms": round(percentile(processing, 99), 1)},
        "whoosh_segments": {"before": before, "after": whoosh_segments(engine)},
    }


def run(root: Path, home: Path, args: argparse.Namespace) -> dict[str, object]:
    engine = Engine(AppPaths(home))
    engine.add_vault(root, name=VAULT)
    load = os.getloadavg()[0]
    t, cpu = time.perf_counter(), time.process_time()
    (report,) = engine.sync([VAULT], embed=False, bulk_in_child=True)  # as the app builds a new vault
    index_s = time.perf_counter() - t
    result: dict[str, object] = {
        "notes": report.keyword.documents,
        "chunks": report.keyword.chunks,
        "keyword_index_s": round(index_s, 1),
        "keyword_index_cpu_s_this_process": round(time.process_time() - cpu, 1),
        "load_average_at_index": round(load, 2),
        "whoosh_segments_after_index": whoosh_segments(engine),
    }
    print(f"indexed {result['notes']} notes, {result['chunks']} chunks in {index_s:.1f} s", file=sys.stderr)
    fill_random_vectors(engine, VAULT)
    vv = engine.vectors_for(VAULT)
    assert vv is not None
    vv.dirty = True
    engine.flush([VAULT])
    engine.close()
    opened, first_search, engine = open_and_search(home)
    result["open_s"] = round(opened, 3)
    result["open_to_first_keyword_search_s"] = round(first_search, 3)
    qs = queries(engine, args.queries)
    result["load_average_at_search"] = round(os.getloadavg()[0], 2)
    result["keyword_search"] = search_latency(engine, qs, "keyword")
    result["hybrid_search"] = search_latency(engine, qs, "hybrid")
    result["load_average_at_edits"] = round(os.getloadavg()[0], 2)
    result["edits"] = {"n": args.edits, **edits(engine, root, args.edits, args.seed)}
    result["load_average_end"] = round(os.getloadavg()[0], 2)
    engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=TLDR, help="the vault to copy (default: the shared tldr pages)")
    ap.add_argument("--copies", type=int, default=6)
    ap.add_argument("--notes", type=int, default=0, help="a generated vault of this many notes instead of copies")
    ap.add_argument("--work", type=Path, help="keep the vault here (made once, reused: prepare it outside the bench lock)")
    ap.add_argument("--prepare-only", action="store_true", help="make the vault in --work and stop")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--edits", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cairn-big-") as tmp:
        work = args.work or Path(tmp)
        root = work / "vault"
        make_vault(root, args.source, args.copies, args.notes)
        if args.prepare_only:
            return 0
        edit_root = Path(tmp) / "edited"  # edits go to a copy: a kept vault stays as it was made
        shutil.copytree(root, edit_root)
        result = {"machine": machine(), "source": str(args.source) if not args.notes else "synth_vault", **run(edit_root, Path(tmp) / "home", args)}
    for key, value in result.items():
        print(f"{key}: {value}")
    write_result("big_vault", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
