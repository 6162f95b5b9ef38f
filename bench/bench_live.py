"""Live update latency on a synthetic vault: one edited note until a search finds it.

Two figures per edit, each for a unique token appended to a random note:
  (a) processing: `engine.update_notes(vault, [note])` until a keyword search finds the
      token — what the live path costs once the watcher has decided to act;
  (b) end to end: the file is written with a real `VaultWatcher` running at its default
      1 s debounce, until the token is searchable. The debounce is a deliberate wait and
      is reported separately; (b) minus the debounce is the watcher's own overhead.

"Keyword searchable" is timed when the Whoosh commit of the live update returns (the
note is searchable from then on; each edit is checked with a search afterwards). The
embeddings of the note follow; "update reported" is when the watcher reports the update,
after them.

The engine is the real default one (default embedder): the keyword index is built with
`sync(embed=False)` to keep the setup short, and each live update then embeds the edited
note's chunks with the real model, as the app does.

Usage: python bench/bench_live.py [--notes 10000] [--edits 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from common import percentile, summary_ms, write_result  # noqa: E402
from synth_vault import generate_vault  # noqa: E402

from core.base.models import SearchFilters  # noqa: E402
from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.search.search import SearchRequest  # noqa: E402
from core.watcher import LiveUpdate, VaultWatcher  # noqa: E402

VAULT = "synth"
DEBOUNCE_S = 1.0  # VaultWatcher's default


def finds(engine: Engine, token: str, rel: str) -> bool:
    resp = engine.search(SearchRequest(token, mode="keyword", k=5, filters=SearchFilters(allow_restricted=True)))
    return any(h.chunk.rel_path == rel for h in resp.hits)


def append_token(root: Path, rel: str, token: str) -> None:
    path = root / rel
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"\n\nLive edit: {token} was added here.\n")


def whoosh_segments(engine: Engine) -> int:
    return len(list((engine.index_for(VAULT).dir / "whoosh").glob("*.seg")))


def open_seconds(home: Path) -> dict[str, object]:
    """Time to open the vault's index from disk (read-only here), and the recovery it found."""
    t = time.perf_counter()
    other = Engine(AppPaths(home), embedder_factory=None)
    vi = other.index_for(VAULT)
    took = time.perf_counter() - t
    other.close()
    return {"seconds": round(took, 3), "recovery": vi.recovery}


def mean_search_ms(engine: Engine, n: int = 20) -> float:
    t = time.perf_counter()
    for _ in range(n):
        engine.search(SearchRequest("project review budget", mode="keyword"))
    return (time.perf_counter() - t) * 1000 / n


def _update_notes_directly(
    engine: Engine, root: Path, sample: list[str], committed: list[float]
) -> tuple[list[float], list[float], list[float], list[int]]:
    """(a) Edit each note and call `update_notes`: ms until searchable, in total, until a search finds it; chunks embedded."""
    searchable_a, update_total, until_found, embedded = [], [], [], []
    for i, rel in enumerate(sample):
        token = f"livetok{i:03d}qz"
        append_token(root, rel, token)
        t0 = time.perf_counter()
        rep = engine.update_notes(VAULT, [rel])
        t1 = time.perf_counter()
        if not finds(engine, token, rel):
            raise AssertionError(f"{token} not found after update_notes")
        until_found.append((time.perf_counter() - t0) * 1000)
        searchable_a.append((committed[-1] - t0) * 1000)
        update_total.append((t1 - t0) * 1000)
        embedded.append(rep.embedding.embedded if rep.embedding else 0)
    return searchable_a, update_total, until_found, embedded


def _through_watcher(engine: Engine, root: Path, sample: list[str], committed: list[float]) -> tuple[list[float], list[float], list[float], float]:
    """(b) Edit each note under a real watcher: ms until searchable and reported, the watcher's own ms, and its stop."""
    reports: list[tuple[float, LiveUpdate]] = []
    seen = threading.Condition()

    def on_update(u: LiveUpdate) -> None:
        with seen:
            reports.append((time.perf_counter(), u))
            seen.notify_all()

    watcher = VaultWatcher(engine, [VAULT], debounce=DEBOUNCE_S, on_update=on_update)
    watcher.start()
    searchable_b, reported_b, processing_b = [], [], []
    try:
        for i, rel in enumerate(sample):
            token = f"watchtok{i:03d}qz"
            n_before, c_before = len(reports), len(committed)
            t0 = time.perf_counter()
            append_token(root, rel, token)
            with seen:  # reported after the embeddings; waiting also keeps edits from batching
                if not seen.wait_for(lambda n=n_before: len(reports) > n, timeout=DEBOUNCE_S + 60):
                    raise TimeoutError(f"no live update for {rel}")
            if len(committed) <= c_before or not finds(engine, token, rel):
                raise AssertionError(f"{token} not searchable after the live update")
            searchable_b.append((committed[c_before] - t0) * 1000)
            reported_b.append((reports[-1][0] - t0) * 1000)
            processing_b.append(reports[-1][1].processing_ms)
    finally:
        t = time.perf_counter()
        watcher.stop()
        stop_ms = (time.perf_counter() - t) * 1000
    return searchable_b, reported_b, processing_b, stop_ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    load_start = round(os.getloadavg()[0], 2)
    with tempfile.TemporaryDirectory(prefix="cairn-live-") as tmp:
        root, home = Path(tmp) / "vault", Path(tmp) / "home"
        t = time.perf_counter()
        generate_vault(root, args.notes, seed=args.seed)
        gen_s = time.perf_counter() - t
        engine = Engine(AppPaths(home))
        engine.add_vault(root, name=VAULT)
        t = time.perf_counter()
        (report,) = engine.sync([VAULT], embed=False)
        index_s = time.perf_counter() - t
        notes = sorted(engine.index_for(VAULT).files)
        print(f"{report.keyword.documents} notes, {report.keyword.chunks} chunks; generated in {gen_s:.1f} s, keyword index {index_s:.1f} s", file=sys.stderr)
        t = time.perf_counter()
        engine.search(SearchRequest("warm up", mode="keyword"))
        warm_s = time.perf_counter() - t
        embedder = engine.embedder_for(engine.vault(VAULT))
        if embedder is not None:
            embedder.embed_query("warm up the model")  # load it now, not inside the first edit
        semantic = "default embedder" if embedder is not None else f"none ({engine.semantic_problem(VAULT)})"
        segments_before = whoosh_segments(engine)
        search_before_ms = mean_search_ms(engine)

        # When the keyword commit of a live update returns, the note is searchable: timing it
        # there, rather than by polling search from another thread, keeps the poller from
        # competing with the watcher for the GIL and inflating the figure.
        keyword = engine.index_for(VAULT).keyword
        committed: list[float] = []
        real_apply = keyword.apply

        def timed_apply(removed, added):  # type: ignore[no-untyped-def]
            real_apply(removed, added)
            committed.append(time.perf_counter())

        keyword.apply = timed_apply  # type: ignore[method-assign]

        # (a) processing: update_notes until searchable
        searchable_a, update_total, until_found, embedded = _update_notes_directly(engine, root, rng.sample(notes, args.edits), committed)
        crashed_open = open_seconds(home)  # dirty flag on disk: as if the process had died here
        t = time.perf_counter()
        engine.flush([VAULT])
        flush_ms = (time.perf_counter() - t) * 1000
        clean_open = open_seconds(home)

        # (b) end to end through a real watcher at the default debounce
        searchable_b, reported_b, processing_b, stop_ms = _through_watcher(engine, root, rng.sample(notes, args.edits), committed)
        keyword.apply = real_apply  # type: ignore[method-assign]
        segments_after = whoosh_segments(engine)
        search_after_ms = mean_search_ms(engine)
        engine.close()

    result = {
        "load_average_1m": {"start": load_start, "end": round(os.getloadavg()[0], 2)},  # other jobs on the machine
        "notes": report.keyword.documents,
        "chunks": report.keyword.chunks,
        "edits": args.edits,
        "semantic": semantic,
        "keyword_index_s": round(index_s, 1),
        "a_processing": {
            "update_notes_to_keyword_searchable": summary_ms(searchable_a),
            "update_notes_then_search_finds": summary_ms(until_found),
            "update_notes_total_with_embedding": summary_ms(update_total),
            "chunks_embedded_per_edit": {"mean": round(sum(embedded) / len(embedded), 2), "max": max(embedded)},
        },
        "debounce_ms": DEBOUNCE_S * 1000,
        "b_end_to_end": {
            "save_to_keyword_searchable": summary_ms(searchable_b),
            "save_to_keyword_searchable_p99_max_ms": [round(percentile(searchable_b, 99), 2), round(max(searchable_b), 2)],
            "save_to_keyword_searchable_minus_debounce": summary_ms([v - DEBOUNCE_S * 1000 for v in searchable_b]),
            "save_to_update_reported_with_embeddings": summary_ms(reported_b),
            "watcher_processing_ms": summary_ms(processing_b),
        },
        "flush_ms": round(flush_ms, 1),
        "index_open_s": {"clean": clean_open, "after_crash_with_dirty_flag": crashed_open},
        "watcher_stop_ms": round(stop_ms, 1),
        "first_search_ms": round(warm_s * 1000, 1),
        "whoosh_segments": {"before": segments_before, "after": segments_after},
        "keyword_search_ms": {"before_edits": round(search_before_ms, 2), "after_edits": round(search_after_ms, 2)},
    }
    path = write_result(f"live_{args.notes}", result)
    print(json.dumps(result, indent=2))
    print(f"written {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
