"""Reading speed and peak memory of each kind beside notes (Word, e-book, web page, mail, chat).

    python bench/bench_kinds.py [--scale 1.0]

Files are written by each library's writing side (tests/kinds_writer.py) into a temporary
folder; web pages are Debian's python3-doc reference (`/usr/share/doc/python3-doc/html/library`,
skipped when absent). Each kind is read in a fresh child process (as the indexer's extraction
child reads it), so the child's peak RSS (VmHWM: `ru_maxrss` survives exec) is that kind's memory: the figure includes Python and
the library (~30–60 MB) beside what the file costs. Units are what a citation points to: a
message, a chapter, a conversation; a Word document or a web page is one unit. The machine is
shared (2 cores, other engineers' jobs): treat times as rough. Written to bench/out/kinds.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, write_result

PY_DOC = Path("/usr/share/doc/python3-doc/html/library")
CHILD = """
import json, sys, time
from pathlib import Path
from core.vault.readers import extract
kind, paths = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter(); units = chars = 0
for p in paths:
    got = extract(kind, Path(p)); units += len(got.pages); chars += sum(len(u.text) for u in got.pages)
hwm = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM"))  # ru_maxrss survives exec
print(json.dumps({"seconds": time.perf_counter() - t0, "units": units, "chars": chars, "peak_rss_mib": hwm / 1024}))
"""


def make_files(folder: Path, scale: float) -> dict[str, list[Path]]:
    from tests.kinds_writer import chatgpt_export, write_docx, write_epub, write_json, write_mbox

    n = max(1, int(scale * 10))
    files: dict[str, list[Path]] = {}
    files["docx"] = [write_docx(folder / f"report{i}.docx") for i in range(n * 5)]
    files["epub"] = [write_epub(folder / f"book{i}.epub", chapters=40) for i in range(n)]
    report = (folder / "report0.docx").read_bytes()
    files["email"] = [write_mbox(folder / "mail.mbox", n * 500, attachments={i: ("r.docx", report) for i in range(1, n * 500, 100)})]
    (folder / "chat").mkdir()
    files["chat"] = [write_json(folder / "chat" / "conversations.json", chatgpt_export(n * 200))]
    if PY_DOC.is_dir():
        files["html"] = sorted(PY_DOC.glob("*.html"))[: n * 10]
    return files


def measure(kind: str, paths: list[Path]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, *map(str, paths)], capture_output=True, text=True, cwd=REPO, check=True)
    got = json.loads(out.stdout)
    size = sum(p.stat().st_size for p in paths)
    return {
        "files": len(paths),
        "megabytes": round(size / 1e6, 2),
        "units": got["units"],
        "seconds": round(got["seconds"], 2),
        "units_per_second": round(got["units"] / got["seconds"], 1),
        "megabytes_per_second": round(size / 1e6 / got["seconds"], 2),
        "peak_rss_mib": round(got["peak_rss_mib"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 50 docx, 10 e-books, 5,000 messages, 2,000 conversations")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="cairn-bench-kinds-") as tmp:
        t0 = time.perf_counter()
        files = make_files(Path(tmp), args.scale)
        print(f"wrote the files in {time.perf_counter() - t0:.1f} s")
        for kind, paths in files.items():
            results[kind] = measure(kind, paths)
            r = results[kind]
            print(f"{kind:6} {r['files']:4} files {r['megabytes']:8.2f} MB  {r['units']:6} units in {r['seconds']:6.2f} s "
                  f"= {r['units_per_second']:8.1f} units/s, {r['megabytes_per_second']:6.2f} MB/s; peak RSS {r['peak_rss_mib']} MiB")  # fmt: skip
    print(write_result("kinds", {"scale": args.scale, "kinds": results, "note": "shared 2-core machine, loaded"}))


if __name__ == "__main__":
    main()
