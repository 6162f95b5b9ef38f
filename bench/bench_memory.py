"""Memory: a vault open with the model loaded and the watcher on, and building + querying a big one.

Two figures the issue tracker asks about, each measured in a child process of its own so
one phase's heap does not inflate the other's:

- **open**: an indexed vault of N notes opened as the app opens it — keyword index, vectors,
  the real MiniLM model loaded by a hybrid query, the live watcher started — then 20
  hybrid queries; RSS after them (VmRSS) and the peak (VmHWM).
- **build**: the cold keyword index of the same vault plus its vectors (random unit
  vectors stand in for the model, which would take an hour at 100k chunks), saved, then
  20 hybrid queries; the peak RSS of that process.

    python bench/bench_memory.py --notes 10000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, write_result  # noqa: E402

QUERIES = ["backup schedule for the server", "release checklist and deploy steps", "garden recipe with tomatoes", "travel flight hotel invoice"]


def _status_mib(field: str) -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def build(vault: Path, home: Path) -> dict[str, object]:
    from bench_query import fill_random_vectors

    from core.base.paths import AppPaths
    from core.engine import Engine
    from core.search.search import SearchRequest

    engine = Engine(AppPaths(home))
    name = engine.add_vault(vault, name="bench").name
    engine.sync([name], embed=False)
    chunks = fill_random_vectors(engine, name)
    vv = engine.vectors_for(name)
    assert vv is not None
    vv.dirty = True
    engine.flush([name])
    for _ in range(5):
        for q in QUERIES:
            engine.search(SearchRequest(q, mode="hybrid"))
    engine.close()
    return {"chunks": chunks, "rss_mib": _status_mib("VmRSS"), "peak_mib": _status_mib("VmHWM")}


def open_vault(home: Path) -> dict[str, object]:
    from core.base.paths import AppPaths
    from core.engine import Engine
    from core.search.search import SearchRequest
    from core.watcher import VaultWatcher

    engine = Engine(AppPaths(home))
    watcher = VaultWatcher(engine)
    watcher.start()
    warnings: list[str] = []
    for _ in range(5):
        for q in QUERIES:
            resp = engine.search(SearchRequest(q, mode="hybrid"))
            warnings = list(resp.warnings)
    out = {
        "rss_mib": _status_mib("VmRSS"),
        "peak_mib": _status_mib("VmHWM"),
        # RSS = anonymous memory (the heap: what Cairn holds) + file pages mapped and read (the
        # index files Whoosh reads through a map: clean, shared with the OS's cache, reclaimable).
        "anon_mib": _status_mib("RssAnon"),
        "file_mib": _status_mib("RssFile"),
        "mode": resp.mode,
        "warnings": warnings,
    }
    watcher.stop(flush=False)
    engine.close()
    return out


def child(phase: str, vault: Path, home: Path) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(REPO), CAIRN_HOME=str(home))
    done = subprocess.run(
        [sys.executable, __file__, "--phase", phase, "--vault", str(vault), "--home", str(home)],
        env=env, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{phase} failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, nargs="*", default=[10_000])
    ap.add_argument("--phase", choices=["build", "open"], help=argparse.SUPPRESS)
    ap.add_argument("--vault", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        result = build(args.vault, args.home) if args.phase == "build" else open_vault(args.home)
        print(json.dumps(result))
        return 0
    from synth_vault import generate_vault

    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="cairn-mem-") as tmp:
        for n in args.notes:
            vault, home = Path(tmp) / f"v{n}", Path(tmp) / f"h{n}"
            generate_vault(vault, n, seed=7)
            built = child("build", vault, home)
            opened = child("open", vault, home)
            results[f"{n}_notes"] = {"build": built, "open": opened}
            print(
                f"{n} notes / {built['chunks']} chunks: build+query peak {built['peak_mib']} MiB; "
                f"open with model + watcher: RSS {opened['rss_mib']} MiB (anon {opened['anon_mib']}, file {opened['file_mib']}; "
                f"peak {opened['peak_mib']} MiB, mode {opened['mode']})"
            )
    write_result("memory", {"results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
