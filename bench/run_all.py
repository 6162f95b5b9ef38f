"""Run every benchmark, print one table, write bench/out/summary.json.

`make bench` runs this with the full sizes; `--quick` uses small ones to check
that everything still runs. Each figure is printed with the machine it ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT, machine  # noqa: E402

HERE = Path(__file__).resolve().parent

FULL = {
    "keyword": ["--synthetic", "1000", "10000"],
    "embed": ["--docs", "150"],
    "query": ["--notes", "4000", "40000"],
    "live": ["--notes", "10000", "--edits", "30"],
    "torture": ["--trials", "100"],
    "ui": ["--notes", "10000"],
}
QUICK = {
    "keyword": ["--synthetic", "500"],
    "embed": ["--docs", "20"],
    "query": ["--notes", "500"],
    "live": ["--notes", "500", "--edits", "5"],
    "torture": ["--trials", "5"],
    "ui": ["--notes", "500", "--embed-seconds", "5"],
}
SCRIPTS = {"keyword": "bench_keyword.py", "embed": "bench_embed.py", "query": "bench_query.py", "live": "bench_live.py", "torture": "torture.py", "ui": "bench_ui.py"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", nargs="*", default=list(SCRIPTS))
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    failures = []
    for name in args.only:
        script = HERE / SCRIPTS[name]
        if not script.exists():
            print(f"skip {name}: {script.name} missing", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        print(f"== {name}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, str(script), *plan[name]], env=env)
        if done.returncode != 0:
            failures.append(name)
        print(f"== {name} done in {time.perf_counter() - t0:.0f} s (exit {done.returncode})", file=sys.stderr)
    summary = {"machine": machine(), "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None, "results": {}}
    for path in sorted(OUT.glob("*.json")):
        if path.name != "summary.json":
            summary["results"][path.stem] = json.loads(path.read_text())
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    m = summary["machine"]
    print(f"\nMachine: {m['cores']} cores, {m['cpu']}, {m['memory_gib']} GiB, Python {m['python']}")
    for name, result in summary["results"].items():
        print(f"- {name}: peak RSS {result.get('peak_rss_mib')} MiB")
    print(f"written {OUT / 'summary.json'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
