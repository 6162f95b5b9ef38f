"""Write resources/smoke/cairn-smoke.pdf: the small PDF the packaged app's smoke test indexes.

    python tools/make_smoke_pdf.py

The file is committed (about 1.5 KB) so the frozen build carries it without a PDF
writer; this script makes it again, byte for byte, from tests/pdf_writer.py. Page 2
holds the word the smoke test searches for (`desktop/smoke.py`, PDF_QUERY), inside a
sentence, under a bookmark, so extraction, page numbers and outline headings are all
exercised by the bundled PDFium.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "resources" / "smoke" / "cairn-smoke.pdf"

PAGES = [
    ["Cairn smoke test", "", "A two-page PDF written by tools/make_smoke_pdf.py."],
    [
        "Field guide",
        "",
        "The quokka is a small marsupial that lives on Rottnest Island.",
        "It is found in the frozen build's keyword index on page two.",
    ],
]


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.pdf_writer import write_pdf

    write_pdf(OUT, PAGES, title="Cairn smoke test", outline=[(0, "Cairn smoke test", 0), (0, "Field guide", 1)])
    print(f"{OUT} ({OUT.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
