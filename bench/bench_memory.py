"""Memory: a vault open with the model loaded and the watcher on, and building + querying a big one.

Two figures the issue tracker asks about, each measured in a child process of its own so
one phase's heap does not inflate the other's:

- **open**: an indexed vault of N notes opened as the app opens it — keyword index, vectors,
  the real MiniLM model loaded by a hybrid query, the live watcher started — then 20
  hybrid queries; RSS after them (VmRSS) and the peak (VmHWM).
- **build**: the cold keyword index of the same vault plus its vectors (random unit
  vectors stand in for the model, which would take an hour at 100k chunks), saved, then
  20 hybrid queries; the peak RSS of that process, and -- because the first keyword index
  runs in a child process (with a segment-building worker of its own) -- the peak of each descendant
  and of the whole process tree's summed RSS, sampled every 50 ms.

    python bench/bench_memory.py --notes 10000
    python bench/bench_memory.py --notes 10000 --runs 2 --baseline /tmp/main-copy   # a git archive of main

With `--baseline`, the open phase also runs from that checkout (its own bench_memory.py, on the
index this checkout built), alternating with this one's, reported as `base_open`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
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


def _proc_rss_mib(pid: int) -> tuple[str, int, float] | None:
    """(name, parent pid, RSS MiB) of one process, from /proc; None once it has gone."""
    try:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, ValueError):
        return None
    # The index child and its segment-building worker both run spawn_main; the tracker is multiprocessing's own.
    kind = "resource_tracker" if "resource_tracker" in cmd else "spawned" if "spawn_main" in cmd else fields["Name"].strip()
    return kind, int(fields["PPid"]), int(fields.get("VmRSS", "0 kB").split()[0]) / 1024


class TreeSampler:
    """Peak RSS of this process, of each descendant and of the tree's sum, sampled on a thread.

    VmHWM and RUSAGE_CHILDREN each see one process; the cold index runs in a spawned child
    that may run a segment-building worker beside it, so what the machine must hold is the sum.
    """

    def __init__(self, period: float = 0.05) -> None:
        self.period = period
        self.peak_total = 0.0
        self.peak_by_pid: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.is_set():
            procs = {}
            for entry in os.listdir("/proc"):
                if entry.isdigit() and (info := _proc_rss_mib(int(entry))) is not None:
                    procs[int(entry)] = info
            tree, frontier = {me}, [me]
            while frontier:
                parent = frontier.pop()
                kids = [pid for pid, (_, ppid, _) in procs.items() if ppid == parent and pid not in tree]
                tree.update(kids)
                frontier.extend(kids)
            total = 0.0
            for pid in tree:
                if pid in procs:
                    kind, _, rss = procs[pid]
                    total += rss
                    if rss > self.peak_by_pid.get(pid, ("", 0.0))[1]:
                        self.peak_by_pid[pid] = ("self" if pid == me else kind, rss)
            self.peak_total = max(self.peak_total, total)
            time.sleep(self.period)

    def summary(self) -> dict[str, object]:
        return {
            "tree_peak_mib": round(self.peak_total, 1),
            "process_peaks_mib": sorted(((k, round(v, 1)) for k, v in self.peak_by_pid.values()), key=lambda kv: -kv[1]),
        }


def build(vault: Path, home: Path) -> dict[str, object]:
    import resource

    from bench_query import fill_random_vectors

    from core.base.paths import AppPaths
    from core.engine import Engine
    from core.search.search import SearchRequest

    t0 = time.perf_counter()
    with TreeSampler() as sampler:
        engine = Engine(AppPaths(home))
        name = engine.add_vault(vault, name="bench").name
        engine.sync([name], embed=False, bulk_in_child=True)  # as the app builds a new vault
        after_sync = _status_mib("VmHWM")
        t_sync = time.perf_counter() - t0
        chunks = fill_random_vectors(engine, name)
        vv = engine.vectors_for(name)
        assert vv is not None
        vv.dirty = True
        engine.flush([name])
        after_vectors = _status_mib("VmHWM")
        for _ in range(5):
            for q in QUERIES:
                engine.search(SearchRequest(q, mode="hybrid"))
        engine.close()
    return {
        "chunks": chunks,
        "rss_mib": _status_mib("VmRSS"),
        "peak_mib": _status_mib("VmHWM"),
        "parent_peak_after_sync_mib": after_sync,
        "parent_peak_after_vectors_mib": after_vectors,
        # The largest descendant that was waited for (the index child or a parser of its pool).
        "children_maxrss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "sync_s": round(t_sync, 1),
        "total_s": round(time.perf_counter() - t0, 1),
        **sampler.summary(),
    }


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


def child(phase: str, vault: Path, home: Path, repo: Path = REPO) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(repo), CAIRN_HOME=str(home))
    done = subprocess.run(
        [sys.executable, str(repo / "bench" / "bench_memory.py"), "--phase", phase, "--vault", str(vault), "--home", str(home)],
        env=env, cwd=repo, capture_output=True, text=True, check=False,
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
    ap.add_argument("--runs", type=int, default=1, help="open phases per vault size (alternating with --baseline)")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout whose open phase runs on the same index")
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
            runs: list[dict[str, object]] = []
            base_runs: list[dict[str, object]] = []
            for _ in range(args.runs):
                runs.append(child("open", vault, home))
                if args.baseline is not None:
                    base_runs.append(child("open", vault, home, args.baseline.resolve()))
                    print(f"  baseline open: RSS {base_runs[-1]['rss_mib']} MiB, peak {base_runs[-1]['peak_mib']} MiB; "
                          f"this checkout: RSS {runs[-1]['rss_mib']} MiB, peak {runs[-1]['peak_mib']} MiB")  # fmt: skip
            opened = max(runs, key=lambda r: float(r["peak_mib"]))  # type: ignore[arg-type]  # the worst run is the figure
            results[f"{n}_notes"] = {"build": built, "open": opened, "open_runs": runs, "base_open_runs": base_runs}
            print(
                f"{n} notes / {built['chunks']} chunks: build+query peak {built['peak_mib']} MiB "
                f"(index child {built['children_maxrss_mib']} MiB, process tree {built['tree_peak_mib']} MiB); "
                f"open with model + watcher: RSS {opened['rss_mib']} MiB (anon {opened['anon_mib']}, file {opened['file_mib']}; "
                f"peak {opened['peak_mib']} MiB, mode {opened['mode']})"
            )
    write_result("memory", {"results": results, "load_average": [round(x, 2) for x in os.getloadavg()]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
