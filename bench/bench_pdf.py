"""PDFs you did not write: fetch Debian's R manuals, build the PDF eval vault, time the extraction.

    python bench/bench_pdf.py VAULT_DIR              # fetch r-doc-pdf, build VAULT_DIR, time every PDF
    cairn index --vault VAULT_DIR                    # then evaluate (see bench/pdf_golden.yaml)
    cairn eval bench/pdf_golden.yaml --vault NAME --modes keyword,semantic,hybrid

The vault: six R manuals in manuals/ beside a copy of simonw-til's 578 markdown notes in til/,
so a PDF answer has to beat real notes. Nothing is committed: the PDFs come from Debian
(`apt-get download r-doc-pdf`, unpacked with `dpkg-deb -x`, no root needed) into a cache
folder next to the vault. Each PDF is timed in a fresh child process, whose peak RSS is the
extraction's memory (PDFium reads pages on demand: a 2,415-page manual never sits whole).
Written to bench/out/pdf.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, machine, write_result

PACKAGE = "r-doc-pdf"
MANUALS = ("R-intro", "R-lang", "R-admin", "R-data", "R-FAQ", "R-ints")
TIMED = MANUALS + ("R-exts", "refman-500", "refman")  # refman-500: its first 500 pages; refman: 2,415
SLICE_PAGES = 500
TIL = REPO.parent / "shared" / "data" / "vaults" / "simonw-til"


def fetch(cache: Path) -> Path:
    """The unpacked package's manual folder, downloaded once."""
    manual = cache / "root" / "usr" / "share" / "doc" / PACKAGE / "manual"
    if manual.is_dir():
        return manual
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", PACKAGE], cwd=cache, check=True)
    deb = max(cache.glob(f"{PACKAGE}_*.deb"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(cache / "root")], check=True)
    return manual


def slice_pdf(src: Path, dest: Path, pages: int) -> Path:
    """The first `pages` pages of a real PDF as a PDF of their own (PDFium copies them as they are)."""
    if dest.exists():
        return dest
    import pypdfium2 as pdfium

    whole = pdfium.PdfDocument(str(src))
    part = pdfium.PdfDocument.new()
    part.import_pages(whole, list(range(min(pages, len(whole)))))
    part.save(str(dest))
    part.close()
    whole.close()
    return dest


# Peak memory from VmHWM: ru_maxrss survives fork + exec on Linux, so a child would report
# its parent's peak when that is higher.
PEAK = """
def peak_mib():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    import resource
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
"""
INDEX_CHILD = PEAK + """
import json, resource, sys, time, os
sys.path.insert(0, sys.argv[1])
from core.cli.main import main
t = time.perf_counter()
code = main(["index", "--vault", sys.argv[2], "--no-embed", "--quiet", "--json"])
s = time.perf_counter() - t
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the extraction child (an upper bound)
print(json.dumps({"exit": code, "seconds": round(s, 2), "peak_rss_mib": peak_mib(), "extractor_peak_rss_mib": round(kids, 1)}))
"""


def time_keyword_index(pdf: Path, work: Path) -> dict[str, object]:
    """`cairn index --no-embed` of a vault holding only `pdf`, cold, in a fresh CAIRN_HOME."""
    import os
    import tempfile

    vault = Path(tempfile.mkdtemp(dir=work, prefix="one-pdf-"))
    shutil.copy2(pdf, vault / pdf.name)
    home = tempfile.mkdtemp(dir=work, prefix="home-")
    env = {**os.environ, "CAIRN_HOME": home}
    out = subprocess.run([sys.executable, "-c", INDEX_CHILD, str(REPO), str(vault)], capture_output=True, text=True, env=env, check=True)
    last = out.stdout.strip().splitlines()[-1]
    got = json.loads(last)
    stats = json.loads("\n".join(out.stdout.strip().splitlines()[:-1]) or "{}")
    vaults = stats.get("vaults") or [{}]
    got["chunks"] = vaults[0].get("chunks")
    shutil.rmtree(vault, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)
    return {"file": pdf.name, **got}


def build_vault(manual: Path, vault: Path) -> None:
    (vault / "manuals").mkdir(parents=True, exist_ok=True)
    for name in MANUALS:
        shutil.copy2(manual / f"{name}.pdf", vault / "manuals" / f"{name}.pdf")
    if not (vault / "til").exists():
        shutil.copytree(TIL, vault / "til")


CHILD = PEAK + """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from core.vault.pdf import extract_pdf
import pypdfium2
before = peak_mib()
t = time.perf_counter()
pdf = extract_pdf(Path(sys.argv[1]))
s = time.perf_counter() - t
print(json.dumps({"pages": len(pdf.pages), "seconds": round(s, 3), "chars": sum(len(p.text) for p in pdf.pages),
                  "dropped_lines": pdf.dropped_lines, "peak_rss_mib": peak_mib(), "rss_before_mib": before}))
"""


def time_pdf(path: Path) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), str(REPO)], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    got["pages_per_s"] = round(got["pages"] / got["seconds"], 1)
    return {"file": path.name, **got}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("vault", type=Path)
    p.add_argument("--cache", type=Path, default=None, help="where the .deb is kept (default: VAULT/../r-doc-pdf-cache)")
    args = p.parse_args()
    manual = fetch(args.cache or args.vault.parent / "r-doc-pdf-cache")
    build_vault(manual, args.vault)
    cache = manual.parents[4]
    sliced = slice_pdf(manual / "refman.pdf", cache / "refman-500.pdf", SLICE_PAGES)
    files = {name: manual / f"{name}.pdf" for name in TIMED} | {"refman-500": sliced}
    rows = [time_pdf(files[name]) for name in TIMED if files[name].exists()]
    for r in rows:
        print(f"{r['file']:<15} {r['pages']:>5} pages {r['seconds']:>7.2f} s {r['pages_per_s']:>6} pages/s  "
              f"peak RSS {r['peak_rss_mib']} MiB ({r['rss_before_mib']} MiB before the first page)")
    indexed = time_keyword_index(sliced, cache)
    print(f"keyword index of {sliced.name}: {indexed}")
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else None
    write_result("pdf", {"machine": machine(), "load_average": load, "extraction": rows, "keyword_index": indexed, "vault": str(args.vault), "at": time.time()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
