"""Cold keyword index, this checkout against another: the best of N interleaved runs.

On a shared machine a median of 3 moves by ±25 % as other jobs come and go, more than most
changes to the index path; the fastest of several interleaved runs is what each code does
when it gets the cores, so two codes compare even when walls against Recoll cannot
(`bench_recoll.py` has those). Each run is a fresh `cairn index --no-embed` process with
its bytecode written beforehand, as an installed Cairn has it.

    python bench/bench_cold_index.py --baseline /tmp/main --runs 5 --vault ../shared/data/vaults/simonw-til
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_recoll import cairn_env, compile_checkout, measured  # noqa: E402
from common import REPO, machine, write_result  # noqa: E402


def best_of(vault: Path, repos: dict[str, Path], runs: int) -> dict[str, dict[str, float]]:
    """Each code's fastest wall and CPU (and its peak memory) over `runs` interleaved rounds."""
    seen: dict[str, list[dict[str, float]]] = {who: [] for who in repos}
    for _ in range(runs):
        for who, repo in repos.items():
            with tempfile.TemporaryDirectory(prefix="cairn-") as home:
                cmd = [sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed", "--quiet"]
                seen[who].append(measured(cmd, cairn_env(home, repo), cwd=repo))
    return {who: {k: min(r[k] for r in rs) for k in rs[0]} for who, rs in seen.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, action="append", required=True, help="vault to index (repeatable)")
    ap.add_argument("--baseline", type=Path, required=True, help="another Cairn checkout (e.g. a `git archive` of main)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    repos = {"cairn": REPO, "baseline": args.baseline.resolve()}
    for repo in repos.values():
        compile_checkout(repo)
    results: dict[str, object] = {"machine": machine(), "load_before": os.getloadavg(), "runs": args.runs, "vaults": {}}
    for vault in args.vault:
        best = best_of(vault.resolve(), repos, args.runs)
        results["vaults"][vault.name] = best  # type: ignore[index]
        c, b = best["cairn"], best["baseline"]
        print(
            f"{vault.name}: Cairn best {c['wall_s']:.2f} s wall / {c['cpu_s']:.2f} s CPU, baseline {b['wall_s']:.2f} s / "
            f"{b['cpu_s']:.2f} s  →  {c['cpu_s'] / max(b['cpu_s'], 1e-9):.2f}× CPU"
        )
    results["load_after"] = os.getloadavg()
    print(f"load average before {results['load_before'][0]:.1f}, after {results['load_after'][0]:.1f}")  # type: ignore[index]
    write_result("cold_index", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
