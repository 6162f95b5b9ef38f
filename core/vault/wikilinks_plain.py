"""Wikilinks of an inline text that needs no inline parser to read them.

Obsidian notes hold `[[wikilinks]]` in nearly every paragraph, so reading links ran
markdown-it's inline pass over nearly every text of such a note a second time. Where a
text holds no code span, escape, HTML or autolink (no "`", "\\", "<") and every bracket in
it belongs to a `[[…]]` or `![[…]]`, the parser's wikilink rule finds exactly what a
regular expression finds; any other text is left to the parser (None).
"""

from __future__ import annotations

import re

_WIKILINK = re.compile(r"!?\[\[([^\[\n]+?)\]\]")
_NEEDS_PARSER = re.compile(r"[`\\<]")


def plain_wikilinks(content: str) -> list[tuple[bool, str, int]] | None:
    """(is an embed, the link's inside, where it starts) for each wikilink, or None if unsure."""
    if _NEEDS_PARSER.search(content):
        return None
    found = [(m.group().startswith("!"), m.group(1), m.start()) for m in _WIKILINK.finditer(content)]
    rest = _WIKILINK.sub("", content)
    if "[" in rest or "]" in rest:
        return None  # a markdown link, an image, an unclosed or empty wikilink: the parser decides
    return found
