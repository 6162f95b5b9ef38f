"""Three inline rules of Cairn's markdown-it for `core.vault.display_plain_inline`: escapes, entities, `$math$`.

Each reads one construct at a trigger character as markdown-it (and the dollar-math plugin)
reads it, and gives the token display text reads for it and where it stops, or None when the
character is text there. What they cannot be sure of raises `Decline` (markdown-it parses the
chunk). Held to markdown-it by `tests/core/vault/test_display_links.py` and the real chunks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from core.vault.display_tokens import Decline, PlainToken

# markdown-it's isWhiteSpace: what a `$` or an emphasis run may not have beside it.
MD_WHITESPACE = frozenset("\t\n\x0b\x0c\r \xa0\u1680\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B))))
ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")  # markdown-it's isMdAsciiPunct, its escapable set
_NAMED_ENTITY = re.compile(r"&([a-z][a-z0-9]{1,31});", re.IGNORECASE)  # markdown-it's NAMED_RE / DIGITAL_RE
_DIGITAL_ENTITY = re.compile(r"&#((?:x[a-f0-9]{1,6}|[0-9]{1,7}));", re.IGNORECASE)

Found = tuple[PlainToken, int] | None


def escape_at(src: str, pos: int, end: int) -> Found:
    """markdown-it's escape rule: `\\*` as `*`, `\\x` as itself, a backslash before a line break as a break."""
    if pos + 1 >= end:
        return None  # a backslash ending the text is text
    ch = src[pos + 1]
    if ch == "\n":
        stop = pos + 2
        while stop < end and src[stop] in " \t":
            stop += 1
        return PlainToken("hardbreak"), stop
    if ch == "`" or (ch in "*_" and src.startswith(ch, pos + 2)) or "\ud800" <= ch <= "\udbff":
        raise Decline  # joined to a backtick run (read as code), or a marker run split by it
    return PlainToken("text", ch if ch in ASCII_PUNCT else "\\" + ch), pos + 2


def entity_at(src: str, pos: int, end: int) -> Found:
    """markdown-it's entity rule: `&amp;` as `&`; a `&` that starts no entity is text."""
    if pos + 1 >= end:
        return None
    if src[pos + 1] == "#":
        if _DIGITAL_ENTITY.match(src, pos):
            raise Decline  # a numeric entity: its code's validity is left to markdown-it
        return None
    m = _NAMED_ENTITY.match(src, pos)
    if m is None or m.group(1) not in _entities():
        return None
    if m.end() > end or "`" in _entities()[m.group(1)]:
        raise Decline  # past the scanned span; a backtick joined to a run
    return PlainToken("text", _entities()[m.group(1)]), m.end()


def math_at(src: str, pos: int, end: int) -> Found:
    """`$math$` as the dollar-math plugin reads it (no space inside, no digit outside), or a `$` as text.

    Shown as written, so only its extent matters: what it swallows is not syntax. The
    plugin looks past a highlight's end and at `src[-1]` for a `$` first in the text.
    """
    if pos + 1 >= len(src) or src[pos + 1] in MD_WHITESPACE or src[pos - 1].isdigit():
        return None
    close = src.find("$", pos + 1)
    if close < 0:
        return None
    if src[pos - 1] == "\\" or src[close - 1] == "\\" or close >= end:
        raise Decline  # escaped, or closed past the scanned span
    if src[close - 1] in MD_WHITESPACE or src[close + 1 : close + 2].isdigit() or close == pos + 1:
        return None
    return PlainToken("math_inline", src[pos + 1 : close]), close + 1


MARKS: dict[str, Callable[[str, int, int], Found]] = {"\\": escape_at, "&": entity_at, "$": math_at}


@cache
def _entities() -> dict[str, str]:
    """markdown-it's entity table (`common/entities`), built from the standard library's as it builds it."""
    import html.entities

    return {name.rstrip(";"): chars for name, chars in html.entities.html5.items()}
