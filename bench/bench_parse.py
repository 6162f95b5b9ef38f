"""CPU of parsing every note of some vaults in process, as the indexer's intake does (`parse_note`).

Measures the parse alone (files are read into memory first), median of N rounds, so a change
to front matter, links or chunking shows without the index writer or the disk. To compare two
checkouts run it with PYTHONPATH pointing at each: the code parsed is the one imported.

    PYTHONPATH=/path/to/checkout python bench/bench_parse.py --vault DIR [--vault DIR] [--rounds 3] [--profile N]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

from core.vault.chunker import new_parser
from core.vault.links import new_link_parser
from core.vault.notes import parse_note
from core.vault.obsidian_settings import VaultSettings, load_settings


def _notes(vault: Path) -> list[tuple[str, bytes]]:
    """Every markdown note of a vault, read once: (relative path, bytes)."""
    out: list[tuple[str, bytes]] = []
    for path in sorted(vault.rglob("*.md")):
        if any(part.startswith(".") for part in path.relative_to(vault).parts):
            continue
        out.append((path.relative_to(vault).as_posix(), path.read_bytes()))
    return out


def _parse_all(notes: list[tuple[str, bytes]], settings: VaultSettings) -> float:
    """CPU seconds to parse every note once with one pair of parsers (as one intake does)."""
    parsers = (new_parser(), new_link_parser())
    start = time.process_time()
    for rel, raw in notes:
        parse_note("v", rel, raw, size=len(raw), mtime_ns=0, parser=parsers[0], link_parser=parsers[1], settings=settings)
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--vault", action="append", required=True, type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, help="print the top N functions of one profiled round")
    args = ap.parse_args()
    print(f"code: {Path(sys.modules['core'].__file__ or '').parent.parent}  load: {os.getloadavg()[0]:.2f}")
    for vault in args.vault:
        notes = _notes(vault)
        settings = load_settings(vault)
        _parse_all(notes[:50], settings)  # imports and first-use caches out of the timing
        times = [_parse_all(notes, settings) for _ in range(args.rounds)]
        rounds = [round(t, 2) for t in times]
        print(f"{vault.name}: {len(notes)} notes, parse CPU median {statistics.median(times):.2f} s, min {min(times):.2f} s  rounds {rounds}")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            _parse_all(notes, settings)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
