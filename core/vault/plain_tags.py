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
- `_` is a word character to `chunker._TAG`: only a `_` run between two letters or digits
  (which can neither open nor close emphasis) is read here.
- `[`, `]` and `!`: with no link references, a bracket is a link or image only before `(`.
- inline HTML (`<br>`, `<!-- comment -->`): its inside is no text; a `<` that opens neither a tag
  nor an autolink is text. An autolink declines the text (its address is a text token).
- line breaks: text on either side, separated as the raw text's newline separates it.

Anything else (an escape, an entity, an autolink, a link, an emphasis `_` run) declines the text:
`plain_tags` returns None and the caller parses it with markdown-it. The differential tests
(`tests/core/vault/test_plain_tags.py`) hold it to markdown-it's result on every real note.
"""

from __future__ import annotations

import re
import unicodedata

from core.vault.display_html import AUTOLINK, EMAIL, HTML_TAG

TAG = re.compile(r"(?<![\w/#&])#([^\W\d][\w/\-]*)", re.UNICODE)

_DECLINE = re.compile(r"\]\(|[\\&]")  # an inline link or image, an escape, an entity
_SPECIAL = re.compile(r"`+|<")
_BACKTICKS = re.compile(r"`+")
_UNDERSCORES = re.compile(r"_+")
_TAG_START = frozenset("!?/abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")  # html_inline's quick check
_MAX_SPANS = 64  # more backtick runs than this: markdown-it's own pass (matching them here is quadratic)


def plain_tags(content: str) -> list[str] | None:
    """The lower-cased tags, in order (repeats kept), in the text children of `content`'s inline
    tokens; None when an inline rule might read more of it than code spans and `*` emphasis."""
    if _DECLINE.search(content) is not None:
        return None
    spans = _spans(content)
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


def _spans(content: str) -> list[tuple[int, int]] | None:
    """The code spans and inline HTML, as (start, end) offsets, in order; None for an autolink.

    markdown-it tries its autolink rule at a `<` before its HTML one; either reads from the `<`
    on, whatever code spans the rest of the text holds, as the backtick rule reads past any `<`.
    """
    spans: list[tuple[int, int]] = []
    if "`" not in content and "<" not in content:
        return spans  # most texts (a Tasks line, a sentence): nothing to look for
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(content)]
    if len(runs) > _MAX_SPANS:
        return None
    pos = 0
    for m in _SPECIAL.finditer(content):
        start = m.start()
        if start < pos:  # inside a code span or a tag found already
            continue
        if m.group() == "<":
            end = _tag_end(content, start)
            if end < 0:
                return None
            if end > start:
                spans.append((start, end))
                pos = end
            continue
        end = m.end()
        closer = next((e for s, e in runs if s >= end and e - s == end - start), None)
        if closer is not None:  # a run of the same length closes it; else the run is text
            spans.append((start, closer))
            pos = closer
        else:
            pos = end
    return spans


def _tag_end(content: str, start: int) -> int:
    """Where inline HTML opened by the `<` at `start` ends; `start` when the `<` is text, -1 for an autolink."""
    close = content.find(">", start + 1)
    if close >= 0 and "<" not in content[start + 1 : close]:
        url = content[start + 1 : close]
        if AUTOLINK.search(url) is not None or EMAIL.search(url) is not None:
            return -1  # its text is a text token of its own (the address): markdown-it's to read
    if content[start + 1 : start + 2] not in _TAG_START:
        return start
    m = HTML_TAG.match(content, start)
    return start if m is None else m.end()


def _underscores_inert(content: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every `_` run outside code spans and tags sits between letters or digits (so it is text)."""
    if "_" not in content:
        return True
    for m in _UNDERSCORES.finditer(content):
        start, end = m.span()
        if any(s <= start < e for s, e in spans):
            continue
        if start == 0 or end == len(content) or not (_word(content[start - 1]) and _word(content[end])):
            return False
    return True


def _word(ch: str) -> bool:
    """A letter or digit: neither space nor punctuation to CommonMark's flanking rules."""
    return unicodedata.category(ch)[0] in "LN"
