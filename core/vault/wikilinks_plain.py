"""Wikilinks of an inline text that needs no inline parser to read them.

Obsidian notes hold `[[wikilinks]]` in nearly every paragraph, so reading links ran
markdown-it's inline pass over nearly every text of such a note a second time. Where a
text holds no code span, escape, HTML or autolink (no "`", "\\", "<") and every bracket in
it belongs to a `[[…]]` or `![[…]]`, the parser's wikilink rule finds exactly what a
regular expression finds; any other text is left to the parser (None). In a note that
defines no link reference, a bracket pair holding no bracket and followed by neither "("
nor "[" is text to the parser too: a callout's `[!info]`, a footnote's `[^1]` (a third of
an Obsidian-shaped vault's texts with a wikilink held one and went to the parser).
"""

from __future__ import annotations

import re

_WIKILINK = re.compile(r"!?\[\[([^\[\n]+?)\]\]")
# A wikilink, or (group 2) a bracket pair no link rule can take without a reference definition.
_PIECE = re.compile(r"!?\[\[([^\[\n]+?)\]\]|(\[[^\[\]\n]*\](?![(\[]))")
_NEEDS_PARSER = re.compile(r"[`\\<]")


def plain_wikilinks(content: str, *, references: bool = False) -> list[tuple[bool, str, int]] | None:
    """(is an embed, the link's inside, where it starts) for each wikilink, or None if unsure.

    `references`: the note defines link references, so any bracket pair may be a link.
    """
    if _NEEDS_PARSER.search(content):
        return None
    pattern = _WIKILINK if references else _PIECE
    # Every bracket must belong to a match: the brackets outside them are all those in the
    # text less those the matches hold (one pass, instead of removing the matches to look).
    outside = content.count("[") + content.count("]")
    found: list[tuple[bool, str, int]] = []
    for m in pattern.finditer(content):
        inner = m.group(1)
        if inner is None:
            outside -= 2  # `[text]`: no bracket inside
            continue
        start = m.start()
        embed = content.startswith("!", start)
        outside -= 4 + inner.count("]")
        found.append((embed, inner, start))
    if outside:
        return None  # a markdown link, an image, an unclosed or empty wikilink: the parser decides
    return found
