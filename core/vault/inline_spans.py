"""Where a text's code spans and inline HTML are, as markdown-it's inline rules find them.

Their insides are neither text nor links: `core.vault.plain_tags` reads tags, and
`core.vault.wikilinks_plain` links, only between them. A backtick run opens a code span that
the next run of the same length closes (a run no later run matches is text, CommonMark's
rule); a `<` opens inline HTML where markdown-it's `html_inline` would read a tag, comment
or declaration there, and is text elsewhere. An autolink (`<https://…>`) makes the caller
decline the text (its address is a text token of its own).
"""

from __future__ import annotations

import re

from core.vault.display_html import AUTOLINK, EMAIL, HTML_TAG

_SPECIAL = re.compile(r"`+|<")
_SPECIAL_WIKI = re.compile(r"`+|<|!?\[\[")
_WIKI_STOP = re.compile(r"\]\]|[\[\n]")  # `core.vault.links`' wikilink rule: the first of these ends its search
_BACKTICKS = re.compile(r"`+")
_TAG_START = frozenset("!?/abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")  # html_inline's quick check
_MAX_SPANS = 64  # more backtick runs than this: markdown-it's own pass (matching them here is quadratic)


def inline_spans(content: str, wikilinks: list[int] | None = None) -> list[tuple[int, int]] | None:
    """The code spans and inline HTML, as (start, end) offsets, in order; None for an autolink.

    markdown-it tries its autolink rule at a `<` before its HTML one; either reads from the `<`
    on, whatever code spans the rest of the text holds, as the backtick rule reads past any `<`.
    With `wikilinks` (a list, for the link parser's wikilink rule), a `[[` or `![[` met before any
    span holding it opens a wikilink up to its first `]]` (no `[` or line break between): its
    inside is neither code span nor HTML (`[[Api#`id`|the `id`]]`), and its start is appended.
    """
    spans: list[tuple[int, int]] = []
    if "`" not in content and "<" not in content:
        return spans  # most texts (a Tasks line, a sentence): nothing to look for
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(content)]
    if len(runs) > _MAX_SPANS:
        return None
    pos = 0
    for m in (_SPECIAL if wikilinks is None else _SPECIAL_WIKI).finditer(content):
        start = m.start()
        if start < pos:  # inside a code span or a tag found already
            continue
        if m.group()[-1] == "[":  # a wikilink's opening (only looked for when `wikilinks` is asked)
            found = _WIKI_STOP.search(content, m.end())
            if found is not None and found.group() == "]]" and found.start() > m.end():
                assert wikilinks is not None
                wikilinks.append(start)
                pos = found.end()
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
