"""Text shown by the panels, built by small pure functions so tests can check it without widgets."""

from __future__ import annotations

import html
import re

from core.base.models import SearchFilters, split_chunk_id
from core.vault.display_text import code_spans, one_line, unmarked

MARK = "**"
_HEADING_MARK = re.compile(r"(?:(?<=\s)|^)#{1,6}\s+")


def snippet_html(snippet: str) -> str:
    """Turn the core's `**match**` marks into <b> and its `code` spans into <code>, escaping the rest
    (note text is not HTML)."""
    text = _HEADING_MARK.sub("", snippet)
    out: list[str] = []
    pos = 0
    for m in code_spans(text):
        out.append(_marked(text[pos : m.start()]))
        out.append(f"<code>{_marked(unmarked(m.group(0)))}</code>")
        pos = m.end()
    out.append(_marked(text[pos:]))
    return "".join(out)


def _marked(text: str) -> str:
    parts = text.split(MARK)
    out = []
    for i, part in enumerate(parts):
        escaped = html.escape(part, quote=False)
        # Odd segments sit between an opening and a closing mark; an unpaired last mark stays literal.
        if i % 2 == 1 and i < len(parts) - 1:
            out.append(f"<b>{escaped}</b>")
        elif i % 2 == 1:
            out.append(html.escape(MARK) + escaped)
        else:
            out.append(escaped)
    return "".join(out)


def snippet_plain(snippet: str) -> str:
    return unmarked(_HEADING_MARK.sub("", snippet).replace(MARK, ""))


def heading_trail(heading_path: str, title: str) -> str:
    """The heading path without the note's own title at its head (the title is shown already)."""
    parts = [p.strip() for p in heading_path.split(">") if p.strip()]
    if parts and parts[0] == title:
        parts = parts[1:]
    return " › ".join(unmarked(one_line(part)) for part in parts)  # as read: no link or emphasis syntax


def score_text(value: float) -> str:
    return f"{value:.5f}"


def filters_lines(filters: SearchFilters | None) -> list[str]:
    """One readable line per active filter; empty when the search was not filtered."""
    if filters is None:
        return []
    lines = []
    if filters.vaults:
        lines.append("vault: " + ", ".join(filters.vaults))
    if filters.folders:
        lines.append("folder: " + ", ".join(filters.folders))
    if filters.tags:
        lines.append(f"tags ({filters.tag_mode}): " + ", ".join(filters.tags))
    if filters.doc_types:
        lines.append("type: " + ", ".join(filters.doc_types))
    if filters.languages:
        lines.append("lang: " + ", ".join(filters.languages))
    if filters.after:
        lines.append(f"after: {filters.after}")
    if filters.before:
        lines.append(f"before: {filters.before}")
    if filters.allow_restricted:
        lines.append("restricted notes included")
    return lines


def chunk_label(chunk_id: str) -> tuple[str, str, int]:
    """Split the core's chunk id for display: (vault, path, ordinal)."""
    return split_chunk_id(chunk_id)

