"""Cold `cairn search`: wall time of a whole new process, keyword and hybrid, on a 10k-note vault.

A CLI user (or a script, or an editor plugin) pays Python's start-up, every
import and the opening of the index on every call, so this measures exactly
that: `python -m core.cli.main search ...` as a child process, from spawn to
exit. Keyword and hybrid runs are interleaved (K H R K H R ...) so a noisy machine
hurts all alike; medians of wall and CPU time are reported. Hybrid is measured
twice: with a query never asked before (the model loads) and with a repeated one
(its vector comes from the on-disk query cache). A bare
`python -c pass` and a process importing only numpy and Whoosh give the floors
in the same run.

The vault is the synthetic one from `synth_vault.py` (10,000 notes by default),
keyword-indexed from nothing unless `--home` points at a built CAIRN_HOME.
Hybrid needs vectors: `--embed-seconds N` embeds for at most N seconds (the
most recently edited notes go first, and a partly embedded vault still loads
the model and the vector index, which is what a cold hybrid search pays).

    python bench/bench_cli_start.py --runs 9
    python bench/bench_cli_start.py --home /tmp/cairn-home --runs 9   # builds it on the first run
    git archive main | tar -x -C /tmp/main-copy
    python bench/bench_cli_start.py --home /tmp/cairn-home --baseline /tmp/main-copy   # same runs, interleaved

With `--baseline`, every search is run from that checkout too, right after this one's, on the
same home (its code must read this checkout's index files), and reported as `base:<mode>`; an
older checkout that cannot read them searches `--baseline-home`, the same vault indexed by its own code.
Give the baseline its own home (a copy) also when its prepared model copy is of another format
(`minilm_session.PREPARED_FORMAT`): each checkout removes the other's copy and makes its own again,
on every search, in a shared one.

`--shape obsidian` generates the vault in Obsidian's shape (properties, wikilinks, callouts on
every note; see `synth_vault.py`). `--source` runs Cairn as a user running from a checkout with
`PYTHONDONTWRITEBYTECODE=1` does: each checkout's `core` copied without any bytecode, so every
search compiles Cairn's modules from source (its dependencies keep the bytecode pip wrote).

The vault is generated beside the home (`/tmp/cairn-home-vault`), never inside it.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, write_result  # noqa: E402
from synth_vault import generate_vault  # noqa: E402

# The two libraries a keyword search cannot do without: the floor under any lazy-import work.
FLOOR = "import numpy, whoosh.index, whoosh.query, whoosh.scoring"
QUERIES = ("database backup schedule", "release roadmap review", "garden recipe", "kernel driver patch")


def _env(home: Path, repo: Path = REPO, *, source: bool = False) -> dict[str, str]:
    """The child's environment: bytecode cached as in an installed Cairn.

    pip writes .pyc files at install time; a shell with PYTHONDONTWRITEBYTECODE set
    would instead compile every module from source on every run (~0.2 s of a cold
    search here), so the children keep their bytecode, outside the source tree.
    """
    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": str(repo)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    if source:  # `repo` is a copy without bytecode (see `source_copy`): compiled on every run, never written
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "cairn-bench-pycache")
    return env


def source_copy(repo: Path, into: Path) -> Path:
    """`repo`'s Cairn package as a fresh clone has it: the sources without any `__pycache__`."""
    dest = into / f"src-{len(list(into.glob('src-*')))}"
    shutil.copytree(repo / "core", dest / "core", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "core.cli.main", *args]


def measured(cmd: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """(wall, CPU) seconds of `cmd` from spawn to exit; fails loudly on a non-zero exit.

    CPU time (user + system, from `os.wait4`) is reported beside wall time because it
    barely moves when other work shares the machine, while wall time can double.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode(errors="replace")[-400:] if proc.stderr else ""
        raise RuntimeError(f"{' '.join(cmd[2:])} failed: {err}")
    if proc.stderr:
        proc.stderr.close()
    return seconds, usage.ru_utime + usage.ru_stime


def vault_of(home: Path) -> Path:
    """The synthetic vault beside CAIRN_HOME: Cairn refuses a vault that holds its own data folder."""
    return home.parent / f"{home.name}-vault"


def build(home: Path, notes: int, embed_seconds: float, shape: str = "plain") -> None:
    vault = vault_of(home)
    if not vault.exists():
        generate_vault(vault, notes, shape=shape)
    env = _env(home)
    t0 = time.perf_counter()
    subprocess.run(_cli("index", "--vault", str(vault), "--no-embed", "--quiet"), env=env, cwd=REPO, check=True)
    print(f"keyword index: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if embed_seconds > 0:
        # SIGINT is `cairn index`'s cancel: what was embedded so far is kept.
        proc = subprocess.Popen(_cli("index", "--quiet"), env=env, cwd=REPO, stdout=subprocess.DEVNULL)
        try:
            proc.wait(timeout=embed_seconds)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=None, help="a CAIRN_HOME with the vault already indexed")
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=9, help="runs per mode (interleaved)")
    ap.add_argument("--embed-seconds", type=float, default=0.0, help="embed for at most this long when building")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout (e.g. a git archive of main) run interleaved")
    ap.add_argument("--baseline-home", type=Path, default=None, help="the baseline's own CAIRN_HOME over the same vault")
    ap.add_argument("--shape", choices=["plain", "obsidian"], default="plain", help="the generated vault's shape")
    ap.add_argument("--source", action="store_true", help="run from bytecode-free copies with PYTHONDONTWRITEBYTECODE=1")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="cairn-cli-start-") as tmp:
        home = args.home or Path(tmp) / "home"
        if args.home is None or not (home / "config.json").exists():
            build(home, args.notes, args.embed_seconds, args.shape)
        env = _env(home)
        # "hybrid" asks a query never asked before (the model is loaded); "hybrid-repeat" asks
        # one asked before, whose vector `cairn search` keeps on disk (no model at all).
        modes = {"keyword": "keyword", "hybrid": "hybrid", "hybrid-repeat": "hybrid"}
        floors = {"python": [sys.executable, "-c", "pass"], "numpy+whoosh": [sys.executable, "-c", FLOOR]}
        repos = {"": REPO} if args.baseline is None else {"": REPO, "base:": args.baseline.resolve()}
        homes = {"": home, "base:": args.baseline_home or home}
        if args.source:
            repos = {prefix: source_copy(repo, Path(tmp)) for prefix, repo in repos.items()}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in (*floors, *(p + m for p in repos for m in modes))}
        stamp = time.time_ns()  # fresh words per run of the bench, so "hybrid" never meets a cached vector
        for prefix, repo in repos.items():
            # An installed Cairn has its bytecode compiled (pip and PyInstaller do it); a checkout run
            # with PYTHONDONTWRITEBYTECODE=1 compiles every module on every search (`--source`).
            if not args.source:
                compileall.compile_dir(str(repo / "core"), quiet=1)
            for mode in dict.fromkeys(modes.values()):  # a warm-up each: the OS file cache, not our code, is what a first run measures
                measured(_cli("search", "--mode", mode, QUERIES[0]), _env(homes[prefix], repo, source=args.source), repo)
        for i in range(args.runs):
            query = QUERIES[i % len(QUERIES)]
            for name, cmd in floors.items():
                times[name].append(measured(cmd, env))
            for name, mode in modes.items():
                for prefix, repo in repos.items():
                    text = f"{query} n{stamp}x{i}{prefix}" if name == "hybrid" else query
                    cmd = _cli("search", "--mode", mode, "-k", "10", text)
                    times[prefix + name].append(measured(cmd, _env(homes[prefix], repo, source=args.source), repo))
        status = subprocess.run(_cli("status"), env=env, cwd=REPO, capture_output=True, text=True, check=False).stdout

    result = {
        name: {
            "median_s": round(statistics.median(w for w, _ in v), 3),
            "min_s": round(min(w for w, _ in v), 3),
            "cpu_median_s": round(statistics.median(c for _, c in v), 3),
            "runs": len(v),
        }
        for name, v in times.items()
    }
    for name, r in result.items():
        print(f"{name:19} wall median {r['median_s']:.3f} s (min {r['min_s']:.3f})  CPU median {r['cpu_median_s']:.3f} s  n={r['runs']}")
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"load average {load[0]} / {load[1]} / {load[2]}")
    run = {"notes": args.notes, "shape": args.shape, "source": args.source, "status": status.strip(), "results": result, "load_average": load}
    path = write_result("cli_start", run)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
