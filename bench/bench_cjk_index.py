"""Keyword indexing cost on Chinese text: CJK bigrams + per-chunk language vs one token per CJK run (before #18).

    python bench/bench_cjk_index.py [--pages DIR] [--rounds 3]

Issue #18's target: index speed within 1.5x of before on CJK text. Before, a run
of CJK characters was one token; now a run becomes overlapping bigrams (more
tokens and postings) and each chunk's language is detected first. Two views,
each run for both variants in this process (the "before" variant patches the
tokenizer's `pieces` to keep a run whole), interleaved, comparing CPU time, which
a busy machine disturbs far less than wall time:

* ``sync``: what `cairn index --no-embed` does for the vault (scan, parse,
  chunk, detect, analyse, commit), in-process: the target's measure. Both
  variants detect each chunk's language (cheap), so against the real pre-#18
  code the ratio is a little higher: 1.23x measured by hand (1.67 -> 2.05 s).
* ``analyzer``: only analysis + Whoosh postings of the raw pages, the part the
  change touches (its worst-case ratio).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from common import OUT, machine

from core.index import analysis
from core.vault.language import detect_language

DEFAULT_PAGES = next(
    (p / "shared/data/vaults/tldr/pages.zh" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults/tldr/pages.zh").is_dir()),
    Path("../shared/data/vaults/tldr/pages.zh"),
)


def whole_runs(text: str) -> Iterator[tuple[int, int, str]]:
    """The tokenizer before #18: a CJK run is one token."""
    for m in analysis._TOKEN.finditer(text):
        yield m.start(), m.end(), m.group(0)


def index_once(texts: list[str], detect: bool) -> float:
    """CPU seconds to analyse and commit `texts` into a fresh Whoosh index."""
    from whoosh.fields import ID, TEXT, Schema
    from whoosh.index import create_in

    schema = Schema(path=ID(stored=True, unique=True), body=TEXT(analyzer=analysis.build_analyzer(), stored=True))
    with tempfile.TemporaryDirectory(prefix="cairn-cjk-bench-") as tmp:
        t0 = time.process_time()
        ix = create_in(tmp, schema)
        writer = ix.writer()
        for i, text in enumerate(texts):
            lang = detect_language(text) if detect else "en"
            with analysis.language(lang or "en"):
                writer.add_document(path=str(i), body=text)
        writer.commit()
        seconds = time.process_time() - t0
        ix.close()
    return seconds


def sync_once(root: Path) -> float:
    """CPU seconds for a fresh keyword index of the vault at `root` (in-process, never written to)."""
    from core.base.paths import AppPaths
    from core.engine import Engine

    with tempfile.TemporaryDirectory(prefix="cairn-cjk-home-") as home:
        engine = Engine(AppPaths(Path(home)), embedder_factory=None)
        name = engine.add_vault(root).name
        t0 = time.process_time()
        engine.index_for(name).sync()
        seconds = time.process_time() - t0
        engine.close()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=DEFAULT_PAGES)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = [p.read_text(encoding="utf-8") for p in sorted(args.pages.rglob("*.md"))]
    if not texts:
        print(f"no pages under {args.pages}", file=sys.stderr)
        return 2
    cjk_chars = sum(len(re.findall(f"[{analysis.CJK_CHARS}]", t)) for t in texts)
    now_pieces = analysis.pieces
    runs: dict[str, dict[str, list[float]]] = {"sync": {"before": [], "after": []}, "analyzer": {"before": [], "after": []}}
    for _ in range(args.rounds):  # interleaved, so load changes hit both alike
        analysis.pieces = whole_runs  # type: ignore[assignment]
        runs["sync"]["before"].append(sync_once(args.pages))
        runs["analyzer"]["before"].append(index_once(texts, detect=False))
        analysis.pieces = now_pieces
        runs["sync"]["after"].append(sync_once(args.pages))
        runs["analyzer"]["after"].append(index_once(texts, detect=True))
    result: dict[str, object] = {"pages": len(texts), "cjk_chars": cjk_chars, "target_ratio": 1.5, "machine": machine()}
    for view, r in runs.items():
        ratio = min(r["after"]) / min(r["before"])
        result[view] = {"before_cpu_s": [round(x, 3) for x in r["before"]], "after_cpu_s": [round(x, 3) for x in r["after"]], "ratio_best": round(ratio, 3)}
        print(f"{view:8} {len(texts)} pages ({cjk_chars:,} CJK characters): one token per run {min(r['before']):.2f} CPU-s, "
              f"bigrams + language {min(r['after']):.2f} CPU-s (best of {args.rounds}): {ratio:.2f}x (target <= 1.5x for sync)")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cjk_index.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
