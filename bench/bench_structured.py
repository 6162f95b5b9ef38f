"""Cost of typed properties and tasks: cold keyword index time and index size, before vs after.

Runs `cairn index --no-embed` on one vault from two checkouts (the code before the change and
after it), alternating them so a loaded machine slows both alike, each into a fresh data
folder, and reports the wall time and the index's size on disk (keyword index + manifest).

    python bench/bench_structured.py VAULT --before /path/to/old/checkout --after . --rounds 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def index_once(code: Path, vault: Path) -> tuple[float, int]:
    """(seconds, bytes on disk) of one cold keyword index of `vault` by the checkout at `code`."""
    with tempfile.TemporaryDirectory(prefix="cairn-bench-") as home:
        env = {**os.environ, "PYTHONPATH": str(code), "CAIRN_HOME": home}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed", "--quiet"], env=env, check=True, cwd=code)
        seconds = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in Path(home).rglob("*") if p.is_file())
    return seconds, size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=Path("."))
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    runs: dict[str, list[tuple[float, int]]] = {"before": [], "after": []}
    for _ in range(args.rounds):
        for label in ("before", "after"):
            seconds, size = index_once(getattr(args, label).resolve(), args.vault.resolve())
            runs[label].append((seconds, size))
            print(f"{label}: {seconds:.1f} s, {size / 1e6:.1f} MB", flush=True)
    for label, rows in runs.items():
        print(f"{label}: median {statistics.median(s for s, _ in rows):.1f} s, {rows[-1][1] / 1e6:.2f} MB")
    b, a = runs["before"], runs["after"]
    time_ratio = statistics.median(s for s, _ in a) / statistics.median(s for s, _ in b)
    print(f"after/before: time x{time_ratio:.3f}, size x{a[-1][1] / b[-1][1]:.3f}")


if __name__ == "__main__":
    main()
