"""Cold keyword index: Cairn against Recoll (Xapian, C++) on the same vault, in the same run.

Both index the same folder from nothing, interleaved A B A B so a noisy machine
hurts both alike. Each run is a child process measured with `os.wait4`: wall time,
CPU time (user + system) and peak RSS. Recoll is installed with apt-get when it is
missing and that is possible (root, Debian); otherwise the script says so and exits 0.

    python bench/bench_recoll.py --vault ../shared/data/vaults/tldr --rounds 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli_start import source_copy  # noqa: E402
from common import REPO, machine, write_result  # noqa: E402

DEFAULT_VAULTS = [REPO.parent / "shared" / "data" / "vaults" / "tldr", REPO.parent / "shared" / "data" / "vaults" / "simonw-til"]


def ensure_recoll() -> str | None:
    """Path of `recollindex`, installing Debian's `recollcmd` when we can; None to skip."""
    found = shutil.which("recollindex")
    if found:
        return found
    if os.name != "posix" or not shutil.which("apt-get") or os.geteuid() != 0:
        return None
    subprocess.run(["apt-get", "install", "-y", "-qq", "recollcmd"], capture_output=True, check=False)
    return shutil.which("recollindex")


def measured(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> dict[str, float]:
    """Run `cmd` to completion; its wall time, CPU seconds and peak RSS (children included)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode(errors="replace")[-500:] if proc.stderr else ""
        raise RuntimeError(f"{cmd[0]} failed: {err}")
    # ru_maxrss is the largest single process of the tree that was waited for (kB on Linux).
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024}


def recoll_run(recollindex: str, vault: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="recoll-") as conf:
        # Markdown and plain text only, like Cairn; no stemming languages beyond English.
        Path(conf, "recoll.conf").write_text(
            f"topdirs = {vault}\nindexstemminglanguages = english\nloglevel = 1\nnoaspell = 1\n", encoding="utf-8"
        )
        return measured([recollindex, "-c", conf, "-z"], dict(os.environ))


def cairn_env(home: str, repo: Path, *, source: bool = False) -> dict[str, str]:
    """The child's environment: Cairn's bytecode read from `__pycache__`, as an installed Cairn has it.

    pip compiles every module at install time. A shell with PYTHONDONTWRITEBYTECODE=1 (this
    machine's) made every measured run compile Cairn's ~120 modules from source instead
    (~0.2 s of CPU on a quiet machine: a sixth of Recoll's whole run on a small vault);
    `--source` measures that case on purpose.
    """
    env = dict(os.environ, CAIRN_HOME=home, PYTHONPATH=str(repo))
    env.pop("PYTHONPYCACHEPREFIX", None)
    if source:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_checkout(repo: Path) -> None:
    """Write `repo`'s bytecode before anything is timed (an install's pip does it)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "core")], check=True, capture_output=True)


def cairn_run(vault: Path, repo: Path = REPO, *, source: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="cairn-") as home:
        env = cairn_env(home, repo, source=source)
        # cwd too: `python -m` puts the working directory before PYTHONPATH on sys.path.
        return measured([sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed", "--quiet"], env, cwd=repo)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, action="append", help="vault to index (repeatable)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--baseline", type=Path, help="another Cairn checkout (e.g. a `git archive` of main) run in the same rounds")
    ap.add_argument("--source", action="store_true", help="as a checkout run with PYTHONDONTWRITEBYTECODE=1: Cairn compiled on every run")
    args = ap.parse_args()
    recollindex = ensure_recoll()
    if recollindex is None:
        print("recoll: not installed and cannot be installed here; skipped")
        write_result("recoll", {"skipped": "recollindex unavailable"})
        return 0
    # The machine may be shared: the load average before and after says how far to trust wall times.
    results: dict[str, object] = {"machine": machine(), "load_before": os.getloadavg(), "vaults": {}, "bytecode": not args.source}
    repos = {"cairn": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    scratch = tempfile.TemporaryDirectory(prefix="cairn-src-")
    for who, repo in repos.items():
        repos[who] = source_copy(repo, Path(scratch.name)) if args.source else repo
        if not args.source:
            compile_checkout(repo)
    for vault in args.vault or DEFAULT_VAULTS:
        vault = vault.resolve()
        if not vault.is_dir():
            print(f"{vault}: not a folder; skipped")
            continue
        runs: dict[str, list[dict[str, float]]] = {"cairn": [], "recoll": []}
        if args.baseline:
            runs["baseline"] = []
        for _ in range(args.rounds):
            runs["cairn"].append(cairn_run(vault, repos["cairn"], source=args.source))
            runs["recoll"].append(recoll_run(recollindex, vault))
            if args.baseline:
                runs["baseline"].append(cairn_run(vault, repos["baseline"], source=args.source))
        med = {who: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for who, rs in runs.items()}
        ratio = {k: med["cairn"][k] / max(med["recoll"][k], 1e-9) for k in med["cairn"]}
        notes = sum(1 for p in vault.rglob("*.md") if p.is_file())
        results["vaults"][vault.name] = {"notes": notes, "median": med, "ratio_cairn_over_recoll": ratio, "runs": runs}  # type: ignore[index]
        print(
            f"{vault.name} ({notes} notes): Cairn {med['cairn']['wall_s']:.1f} s wall / {med['cairn']['cpu_s']:.1f} s CPU / "
            f"{med['cairn']['peak_mib']:.0f} MiB  vs Recoll {med['recoll']['wall_s']:.1f} s / {med['recoll']['cpu_s']:.1f} s / "
            f"{med['recoll']['peak_mib']:.0f} MiB  →  {ratio['wall_s']:.2f}× wall, {ratio['cpu_s']:.2f}× CPU, {ratio['peak_mib']:.2f}× memory"
        )
        if args.baseline:
            base = med["baseline"]
            print(
                f"  baseline Cairn {base['wall_s']:.1f} s wall / {base['cpu_s']:.1f} s CPU / {base['peak_mib']:.0f} MiB  →  "
                f"{base['wall_s'] / max(med['recoll']['wall_s'], 1e-9):.2f}× Recoll's wall"
            )
    scratch.cleanup()
    results["load_after"] = os.getloadavg()
    print(f"load average before {results['load_before'][0]:.1f}, after {results['load_after'][0]:.1f}")  # type: ignore[index]
    write_result("recoll", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
