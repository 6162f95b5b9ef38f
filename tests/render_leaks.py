"""Counting raw markdown or HTML syntax in text meant for reading (snippets, link lines, quotes).

Code between backticks is code and may hold anything; everything else must read as prose.
Used by the rendering tests on the construct corpus, the real Obsidian vaults and real searches.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
#: Snippet highlight markers are the app's own, not the note's syntax.
_MARK = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")

_HTML_TAGS = "span|div|br|img|a|b|i|p|td|tr|table|script|style|iframe|sup|sub|kbd|mark|u|font|center|details|summary"

LEAKS: dict[str, re.Pattern[str]] = {
    "callout marker": re.compile(r"\[![\w-]+\]"),
    "table separator row": re.compile(r"\|\s*:?-{3,}|-{3,}:?\s*\|"),
    "table pipe": re.compile(r"(?:^|\s)\|\s(?:[^|\n]*\s)?\|(?:\s|$)"),
    "block id": re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$", re.MULTILINE),
    "comment": re.compile(r"%%"),
    "highlight": re.compile(r"==[^\s=](?:[^=\n]*[^\s=])?=="),
    "embed": re.compile(r"!\[\["),
    "wikilink": re.compile(r"\[\[|\]\]"),
    "markdown link": re.compile(r"\]\([^)\s]*\)"),
    "html tag": re.compile(rf"</?(?:{_HTML_TAGS})\b[^>]*>", re.IGNORECASE),
    "html entity": re.compile(r"&(?:#\d+|#x[0-9A-Fa-f]+|[A-Za-z]{2,8});"),
    "code fence": re.compile(r"```|~~~"),
    "quote marker": re.compile(r"(?:^|\n)\s*>\s"),
    "heading marker": re.compile(r"(?:^|\n)#{1,6}\s"),
    "emphasis": re.compile(r"(?<![\w*])\*\*?[^\s*][^*\n]*?(?<=[^\s*])\*\*?(?![\w*])|(?<![\w_])__?[^\s_][^_\n]*?(?<=[^\s_])__?(?![\w_])"),
    "front matter": re.compile(r"(?:^|\n)---\s*(?:\n|$)"),
    "task box": re.compile(r"(?:^|\n)\s*[-*+]\s\[[ xX]\]"),
}


def outside_code(text: str) -> str:
    """`text` with backtick code spans blanked out (their contents may be anything)."""
    return _CODE.sub(" ", text)


def leaks(text: str, *, snippet: bool = False) -> list[str]:
    """The kinds of raw syntax `text` shows outside code (one entry per occurrence)."""
    prose = outside_code(text)
    if snippet:
        prose = _MARK.sub(r"\1", prose)
    return [name for name, pattern in LEAKS.items() for _ in pattern.finditer(prose)]


def count_leaks(texts: Iterable[str], *, snippet: bool = False) -> Counter[str]:
    """How many leaks of each kind the texts show in all."""
    total: Counter[str] = Counter()
    for text in texts:
        total.update(leaks(text, snippet=snippet))
    return total
