"""Walk an HTML tree (lxml) into a unit's blocks: headings, paragraphs, list items, table rows.

Shared by e-book chapters, saved web pages and HTML e-mail bodies. The tree is parsed by
lxml's HTML parser (libxml2), which neither fetches nor expands external entities; this
module only decides where lines break and which text is a heading.
"""

from __future__ import annotations

from typing import Any

from core.vault.kinds import UnitBuilder

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
SKIPPED = frozenset({"script", "style", "noscript", "template", "head", "nav", "svg", "math", "button", "form", "select"})
BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "aside", "header", "footer", "li", "ul", "ol", "dl", "dt", "dd",
     "pre", "blockquote", "figure", "figcaption", "table", "thead", "tbody", "caption", "body", "hr", "address"}
)  # fmt: skip


def parse_html(data: bytes | str) -> Any:
    """An lxml HTML tree of `data`, or None when it holds no markup at all."""
    import lxml.etree
    import lxml.html

    try:
        return lxml.html.document_fromstring(data)
    except (lxml.etree.ParserError, ValueError):
        return None


def html_into(root: Any, out: UnitBuilder, *, top_level: int = 0) -> None:
    """Append the text under `root` to `out`; h1–h6 become headings `top_level` levels deeper."""
    line: list[str] = []
    _walk(root, out, line, top_level)
    _flush(out, line)


def _walk(el: Any, out: UnitBuilder, line: list[str], top_level: int) -> None:
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if tag in SKIPPED or not tag:
        return
    if tag in HEADINGS:
        _flush(out, line)
        out.heading(HEADINGS[tag] + top_level, el.text_content())
        return
    if tag == "tr":
        _flush(out, line)
        cells = [" ".join(c.text_content().split()) for c in el if isinstance(c.tag, str) and c.tag.lower() in ("td", "th")]
        out.block(" | ".join(c for c in cells if c))
        return
    if tag == "br":
        line.append("\n")
        return
    block = tag in BLOCKS
    if block:
        _flush(out, line)
    if el.text:
        line.append(el.text)
    for child in el:
        _walk(child, out, line, top_level)
        if child.tail:
            line.append(child.tail)
    if block:
        _flush(out, line)


def _flush(out: UnitBuilder, line: list[str]) -> None:
    if line:
        text = "\n".join(" ".join(part.split()) for part in "".join(line).split("\n"))
        out.block(text)
        line.clear()
