"""The `#tags` of an inline text without markdown-it, when its inline rules provably read none of it.

The chunker takes a note's tags from the `text` children of markdown-it's inline tokens
(`chunker._tags_of`), so a `#tag` inside a code span is no tag. Parsing a line into those
children costs ~0.15 ms; Obsidian Tasks lines (`- [ ] #task Do it 📅 2024-01-01`) carry a
`#` on nearly every line, and on a Tasks vault that inline pass was ~45 % of reading its notes.

What the chunker's parser (CommonMark and tables, no link references in the note) can make
of a text, read left to right as its inline rules do:

- a code span: its inside is no text. Backtick runs are matched exactly as markdown-it does.
- `*` emphasis: its markers vanish between text tokens. A `*` stops a tag and lets one
  start after it, just as the end of a text token does, so the raw text gives the same tags.
- `_` is a word character to `chunker._TAG`: a `_` run between two letters or digits can neither
  open nor close emphasis; any other run is read only where it touches no `#tag` (either way the
  same tags).
- `[`, `]` and `!`: with no link references, a bracket is a link or image only before `(`.
- inline HTML (`<br>`, `<!-- comment -->`): its inside is no text; a `<` that opens neither a tag
  nor an autolink is text. An autolink declines the text (its address is a text token).
- line breaks: text on either side, separated as the raw text's newline separates it.

- inline links and images that `core.vault.wikilinks_plain.plain_links` is sure of: a link's label is
  text, its brackets and destination are not; an image is no text at all.

- an escape `\\X` of ASCII punctuation (outside code spans and HTML): X as literal text.

Anything else (another backslash, an entity or what may be one, an autolink, another link, an emphasis `_` run) declines the text:
`plain_tags` returns None and the caller parses it with markdown-it. The differential tests
(`tests/core/vault/test_plain_tags.py`) hold it to markdown-it's result on every real note.
"""

from __future__ import annotations

import re
import unicodedata

from core.vault.inline_spans import inline_spans
from core.vault.wikilinks_plain import plain_links

TAG = re.compile(r"(?<![\w/#&])#([^\W\d][\w/\-]*)", re.UNICODE)

_DECLINE = re.compile(r"\\|&[A-Za-z#]")  # an escape, what may be an entity (a lone `&` is text)
_UNDERSCORES = re.compile(r"_+")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation: CommonMark's escape
_AS_ITSELF = frozenset("_/-#&")  # escaped, these stay as they are to `TAG`; other punctuation reads as a space


def _escaped(m: re.Match[str]) -> str:
    """What an escape is to the tags: its character as literal text, which `TAG` reads as it reads
    the character itself (`\\#a` is the text `#a`, `\\_` a word character) or, for the other
    punctuation (`\\[`, `\\*`, `` \\` ``), as a space: text that ends a tag, and that no inline rule
    reads as a bracket, emphasis or code span, as markdown-it reads none of the escaped ones."""
    char = m.group(1)
    return char if char in _AS_ITSELF else " "


def plain_tags(content: str) -> list[str] | None:
    """The lower-cased tags, in order (repeats kept), in the text children of `content`'s inline
    tokens; None when an inline rule might read more of it than code spans and `*` emphasis."""
    if "\\" in content:
        if "`" in content or "<" in content:
            return None  # a backslash in a code span or HTML is no escape: the parser's
        content = _ESCAPE.sub(_escaped, content)
    if _DECLINE.search(content) is not None:
        return None
    if "](" in content:
        blanked = _links_blanked(content)
        if blanked is None:
            return None
        content = blanked
    spans = inline_spans(content)
    if spans is None or not _underscores_inert(content, spans):
        return None
    if spans:
        parts, pos = [], 0
        for start, end in spans:
            parts.append(content[pos:start])
            pos = end
        parts.append(content[pos:])
        content = "\n".join(parts)  # a code span or a tag ends a text token: nothing joins across it
    return [m.group(1).lower() for m in TAG.finditer(content)]


def _links_blanked(content: str) -> str | None:
    """`content` with its inline links' brackets and destinations, and its images whole, as spaces;
    None unless `wikilinks_plain.plain_links` is sure of them.

    A link's label is text children of the inline token (its tags count); its destination is
    no text, and an image's label is its own token's. A space ends a tag and lets one start after
    it, as the link's tokens end a text token. With a `[[` the chunker's parser (no wikilink
    rule) may pair brackets otherwise than `plain_links` does: declined."""
    if "[[" in content:
        return None
    found = plain_links(content)
    if found is None:
        return None
    out: list[str] = []
    pos = 0
    for link in found:
        label = link.pos + (2 if link.embed else 1)
        close = content.index(")", label + len(link.inner) + 2) + 1  # a destination holds no ")"
        out.append(content[pos : link.pos])
        if link.embed:
            out.append(" " * (close - link.pos))
        else:
            out += [" " * (label - link.pos), link.inner, " " * (close - label - len(link.inner))]
        pos = close
    out.append(content[pos:])
    return "".join(out)


def _underscores_inert(content: str, spans: list[tuple[int, int]]) -> bool:
    """Whether no `_` run outside code spans can change a tag, whether or not markdown-it's emphasis
    rule takes it: it sits between letters or digits (text either way), or it touches no tag, i.e.
    it is not right before a `#` (as text it stops `#` starting a tag, as emphasis it does not) nor
    part of a `#word` (`TAG` reads `_` as a word character; emphasis would end the tag there)."""
    if "_" not in content:
        return True
    tags: list[tuple[int, int]] | None = None
    for m in _UNDERSCORES.finditer(content):
        start, end = m.span()
        if any(s <= start < e for s, e in spans):
            continue
        if 0 < start and end < len(content) and _word(content[start - 1]) and _word(content[end]):
            continue
        if tags is None:
            tags = [tag.span() for tag in TAG.finditer(content)]
        if content.startswith("#", end) or any(s <= end and start <= e for s, e in tags):
            return False
    return True


def _word(ch: str) -> bool:
    """A letter or digit: neither space nor punctuation to CommonMark's flanking rules."""
    return unicodedata.category(ch)[0] in "LN"
