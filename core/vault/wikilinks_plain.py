"""Links of an inline text that needs no inline parser to read them.

Obsidian notes hold `[[wikilinks]]` in nearly every paragraph, so reading links ran
markdown-it's inline pass over nearly every text of such a note a second time. Where a
text holds no code span, escape, HTML or autolink (no "`", "\\", "<") and every bracket in
it belongs to a `[[…]]` or `![[…]]`, the parser's wikilink rule finds exactly what a
regular expression finds; any other text is left to the parser (None). In a note that
defines no link reference, a bracket pair holding no bracket and followed by neither "("
nor "[" is text to the parser too: a callout's `[!info]`, a footnote's `[^1]` (a third of
an Obsidian-shaped vault's texts with a wikilink held one and went to the parser), an empty `[[]]`.

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
import unicodedata
from typing import Any, NamedTuple

from core.vault.inline_spans import inline_spans
from core.vault.simple_note import InlineText

_WIKI = r"!?\[\[(?!\]\])([^\[\n]+?)\]\]"  # up to the first `]]` (the parser's rule: `[[]]]` is none)
_MARKDOWN = r"(!?)\[([^\[\]\n*&`]*)\]\(((?:[A-Za-z0-9\-._~/#?:@!$'*+,;=^]|%[0-9A-Fa-f]{2})*)\)"
_WIKILINK = re.compile(_WIKI)
# A wikilink, a markdown link (groups 2-4), or (group 5) a bracket pair no link rule can take
# without a reference definition: `[text]`, or an empty wikilink `[[]]` (all four brackets text).
_PIECE = re.compile(_WIKI + "|" + _MARKDOWN + r"|(\[[^\[\]\n]*\](?![(\[])|\[\[\]\](?![(\[]))")
_WITH_REFERENCES = re.compile(_WIKI + "|" + _MARKDOWN)
_UNDERSCORES = re.compile(r"_+")
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
    if _REFUSED.search(content):
        return None
    if "`" in content or "<" in content:
        return _around_spans(content, references)
    if "\\" in content:
        return None  # an escape: the parser's
    found: list[PlainLink] = []
    return found if _read(content, 0, references, found) else None


def _read(content: str, offset: int, references: bool, found: list[PlainLink]) -> bool:
    """Add the links of `content` (a text, or the part of one between code spans, at `offset`) to
    `found`; False when a bracket belongs to no link or pair this reader is sure of."""
    pattern = _WITH_REFERENCES if references else _PIECE
    # Every bracket must belong to a match: the brackets outside them are all those in the
    # text less those the matches hold (one pass, instead of removing the matches to look).
    outside = content.count("[") + content.count("]")
    for m in pattern.finditer(content):
        inner = m.group(1)
        start = m.start()
        if inner is not None:
            outside -= 4 + inner.count("]")
            found.append(PlainLink(content.startswith("!", start), inner, offset + start))
        elif m.group(4) is not None:
            outside -= 2  # a label and destination hold no bracket
            label = m.group(3)
            if "_" in label and not _underscores_inert(label):
                return False  # an emphasis `_` in a label: its text is the parser's to say
            found.append(PlainLink(bool(m.group(2)), label, offset + start, m.group(4).replace("^", "%5E")))
        else:
            outside -= 4 if m.group(5).startswith("[[") else 2  # `[[]]`, or `[text]`: no bracket inside
    # Another link, an image's label with brackets, an unclosed or empty wikilink: the parser decides.
    return not outside


def _around_spans(content: str, references: bool) -> list[PlainLink] | None:
    """The links of a text with backticks or a "<": those between its code spans and inline HTML
    (`<br>`, `<!-- … -->`), whose insides hold no link; an autolink declines the text.

    A link or bracket pair that holds a backtick, or a bracket no link between two spans takes
    (a label reaching over a span), declines the text: markdown-it's link rule reads a label
    past code spans, and a span may close inside what looked like a link."""
    wikilinks: list[int] = []  # starts of the wikilinks met before any span: the parser's rule reads them whole
    spans = inline_spans(content, wikilinks)
    if spans is None:
        return None
    found: list[PlainLink] = []
    pos = 0
    for start, end in [*spans, (len(content), len(content))]:
        gap = content[pos:start]
        if "\\" in gap or not _read(gap, pos, references, found):
            return None
        pos = end
    if any("`" in link.inner and link.pos not in wikilinks for link in found):
        return None  # a backtick inside a link met after a span: which rule reads it first is the parser's
    return found


def _underscores_inert(label: str) -> bool:
    """Whether every `_` run of `label` sits between two letters or digits, where it can neither
    open nor close emphasis (CommonMark's flanking rules): it is text, as the label keeps it."""
    for m in _UNDERSCORES.finditer(label):
        start, end = m.span()
        if start == 0 or end == len(label) or not (_word(label[start - 1]) and _word(label[end])):
            return False
    return True


def _word(ch: str) -> bool:
    """A letter or digit: neither space nor punctuation to CommonMark's flanking rules."""
    return unicodedata.category(ch)[0] in "LN"


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
