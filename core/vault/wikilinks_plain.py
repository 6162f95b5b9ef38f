"""Links of an inline text that needs no inline parser to read them.

Obsidian notes hold `[[wikilinks]]` in nearly every paragraph, so reading links ran
markdown-it's inline pass over nearly every text of such a note a second time. Where a
text holds no code span, escape, HTML or autolink (no "`", "\\", "<") and every bracket in
it belongs to a `[[…]]` or `![[…]]`, the parser's wikilink rule finds exactly what a
regular expression finds; any other text is left to the parser (None). In a note that
defines no link reference, a bracket pair holding no bracket and followed by neither "("
nor "[" is text to the parser too: a callout's `[!info]`, a footnote's `[^1]` (a third of
an Obsidian-shaped vault's texts with a wikilink held one and went to the parser).

Inline links and images `[label](destination)` are read too in their narrowest shape, the
one markdown-it surely reads as a link and whose parts it keeps as written: a label of
plain text (no brackets, line break, or character another inline rule reads: `*`, `_`,
`&`), a destination of URL-safe ASCII (no parentheses, spaces, entities or escapes; `%`
only before two hex digits, which markdown-it's `normalizeLink` leaves as it is) right
before the `)`, no title, and no scheme markdown-it refuses (`javascript:` …). A book's
chapter list and its cross-references are mostly this shape.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from core.vault.simple_note import InlineText

_WIKI = r"!?\[\[([^\[\n]+?)\]\]"
_MARKDOWN = r"(!?)\[([^\[\]\n*_&]*)\]\(((?:[A-Za-z0-9\-._~/#?:@!$'*+,;=]|%[0-9A-Fa-f]{2})*)\)"
_WIKILINK = re.compile(_WIKI)
# A wikilink, a markdown link (groups 2-4), or (group 5) a bracket pair no link rule can take
# without a reference definition.
_PIECE = re.compile(_WIKI + "|" + _MARKDOWN + r"|(\[[^\[\]\n]*\](?![(\[]))")
_WITH_REFERENCES = re.compile(_WIKI + "|" + _MARKDOWN)
_NEEDS_PARSER = re.compile(r"[`\\<]")
# markdown-it's `validateLink`: a link to such a scheme is no link at all (its brackets are text).
_REFUSED = re.compile(r"\]\((?:vbscript|javascript|file|data):", re.IGNORECASE)


class PlainLink(NamedTuple):
    """A link read without the parser: where it starts and what markdown-it's token would hold."""

    embed: bool  # `![[…]]` or an image
    inner: str  # a wikilink's inside, or a markdown link's label
    pos: int  # where it starts in the text (its "!" for an embed or image)
    destination: str | None = None  # a markdown link's or image's; None for a wikilink


def plain_links(content: str, *, references: bool = False) -> list[PlainLink] | None:
    """Every wikilink and plain markdown link of `content`, in order, or None if unsure.

    `references`: the note defines link references, so any other bracket pair may be a link.
    """
    if _NEEDS_PARSER.search(content) or _REFUSED.search(content):
        return None
    pattern = _WITH_REFERENCES if references else _PIECE
    # Every bracket must belong to a match: the brackets outside them are all those in the
    # text less those the matches hold (one pass, instead of removing the matches to look).
    outside = content.count("[") + content.count("]")
    found: list[PlainLink] = []
    for m in pattern.finditer(content):
        inner = m.group(1)
        start = m.start()
        if inner is not None:
            outside -= 4 + inner.count("]")
            found.append(PlainLink(content.startswith("!", start), inner, start))
        elif m.group(4) is not None:
            outside -= 2  # a label and destination hold no bracket
            found.append(PlainLink(bool(m.group(2)), m.group(3), start, m.group(4)))
        else:
            outside -= 2  # `[text]`: no bracket inside
    if outside:
        return None  # another link, an image's label with brackets, an unclosed or empty wikilink: the parser decides
    return found


class LinkChild(NamedTuple):
    """The part of an inline child token `core.vault.links` reads, for a link read without the parser."""

    type: str
    content: str = ""
    meta: dict[str, Any] = {}  # noqa: RUF012 - never changed
    attrs: dict[str, str | int | float] = {}  # noqa: RUF012 - never changed


class PlainInline:
    """The inline token markdown-it would make of a plain text, as far as `core.vault.links` reads it: the
    links' tokens in order (its text tokens hold no link, and no link's label but its own text)."""

    def __init__(self, part: InlineText, found: list[PlainLink]) -> None:
        self.content = part.content
        self.map = [part.line, part.line + 1]
        self.children: list[LinkChild] = []
        for link in found:
            if link.destination is None:
                self.children.append(LinkChild("wikilink", link.inner, {"embed": link.embed, "pos": link.pos}))
            elif link.embed:
                self.children.append(LinkChild("image", link.inner, attrs={"src": link.destination}))
            else:
                self.children += [LinkChild("link_open", attrs={"href": link.destination}), LinkChild("text", link.inner), LinkChild("link_close")]
