"""Word documents (.docx) through python-docx: headings as the heading path, tables as rows.

Why python-docx (1.2) over docx2python and mammoth: it gives the document's own structure —
paragraphs with their styles (so "Heading 2" is a level, not a guess from bold text) and
tables as rows and cells, in body order (`iter_inner_content`) — which is what chunks and
citations need; mammoth converts to HTML that would have to be parsed again, docx2python
flattens to nested lists without style levels. It needs lxml, which the e-book and web page
readers share, and parses with entity resolution switched off.

What is left out: comments (they live in `comments.xml`, not in the body), tracked
deletions (`w:delText`) and the source side of tracked moves (`w:moveFrom`); tracked
insertions are kept (they are the text as it now reads).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.vault.kinds import HEADING_JOIN, KindText, UnitBuilder, check_zip
from core.vault.pdf import PdfProblem

_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre|título|titolo|kop)\s*(\d)$", re.IGNORECASE)
_TEXT = "(.//w:t | .//w:tab | .//w:br | .//w:cr)[not(ancestor::w:moveFrom) and not(ancestor::w:del)]"


def extract_docx(path: Path) -> KindText:
    """Read a Word document's body. Raises `PdfProblem` for a damaged or protected file."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    check_zip(path, "Word document").close()
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise PdfProblem("malformed", f"not a Word document python-docx can open ({exc})") from None
    out = UnitBuilder()
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):
            _table(block, out)
        else:
            _paragraph(block, out)
    if out.empty:
        raise PdfProblem("no_text", "the Word document has no text")
    title = (document.core_properties.title or "").strip() or _first_heading(out)
    return KindText(title or None, (out.page(1),))


def _paragraph(par: Any, out: UnitBuilder) -> None:
    text = paragraph_text(par._p)
    level = _level(par)
    if level is not None:
        out.heading(level, text)
    else:
        out.block(text)


def paragraph_text(p: Any) -> str:
    """A paragraph's text as it now reads: runs, inserted runs and hyperlinks; not deletions."""
    parts = []
    for node in p.xpath(_TEXT):
        name = node.tag.rpartition("}")[2]
        parts.append(node.text or "" if name == "t" else ("\t" if name == "tab" else "\n"))
    return "".join(parts)


def _level(par: Any) -> int | None:
    try:
        name = par.style.name if par.style is not None else ""
    except (KeyError, ValueError):
        return None
    if name == "Title":
        return 1
    m = _HEADING_STYLE.match(name or "")
    return int(m.group(1)) if m else None


def _table(table: Any, out: UnitBuilder) -> None:
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(" ".join(paragraph_text(p._p).split()) for p in cell.paragraphs).strip()
            if text and (not cells or cells[-1] != text):  # a merged cell repeats in every column it spans
                cells.append(text)
        out.block(" | ".join(cells))


def _first_heading(out: UnitBuilder) -> str | None:
    return next((path.split(HEADING_JOIN)[0] for _, path in out.sections if path), None)
