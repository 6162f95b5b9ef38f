"""Shared helpers for the benchmark scripts: the machine, percentiles, peak memory, output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# The shared data sit beside the checkout (/work/main, /work/shared) or beside its worktree folder (/work/wt/x).
SHARED = next((p / "shared" for p in (REPO.parent, REPO.parent.parent) if (p / "shared" / "data").is_dir()), REPO.parent / "shared")
SCIFACT = SHARED / "data" / "scifact"
OUT = REPO / "bench" / "out"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def machine() -> dict[str, Any]:
    """Cores and CPU model: every figure is stated with the machine it ran on."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"cores": os.cpu_count(), "cpu": model, "memory_gib": mem_gib, "python": platform.python_version(), "os": platform.platform()}


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, int(round(pct / 100 * (len(ordered) - 1)))))
    return ordered[idx]


def summary_ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values), 2) if values else 0.0,
        "p95_ms": round(percentile(values, 95), 2),
        "n": len(values),
    }


def peak_rss_mib() -> float | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def write_result(name: str, payload: dict[str, Any]) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "machine": machine(), **payload, "peak_rss_mib": peak_rss_mib()}
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of every file below a folder: proves a run rewrote nothing."""
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(directory.rglob("*")) if p.is_file()}
