"""markdown-it's HTML patterns (and its reference-label key), copied so display text can do without markdown-it.

`core.vault.display_plain` reads chunks without markdown-it (a cold `cairn search` never
imports it for their snippets), but must find HTML blocks, inline tags and autolinks exactly
where markdown-it finds them. These are markdown-it-py 4.3's own expressions (`common/html_re`,
`common/html_blocks`, `rules_block/html_block`, `rules_inline/autolink`, `normalizeReference`);
`tests/core/vault/test_display_plain.py` holds them equal to the installed markdown-it's.
"""

from __future__ import annotations

import re

_ATTR_NAME = "[a-zA-Z_:][a-zA-Z0-9:._-]*"
_UNQUOTED = "[^\"'=<>`\\x00-\\x20]+"
_ATTR_VALUE = "(?:" + _UNQUOTED + "|'[^']*'|\"[^\"]*\")"
_ATTRIBUTE = "(?:\\s+" + _ATTR_NAME + "(?:\\s*=\\s*" + _ATTR_VALUE + ")?)"
OPEN_TAG = "<[A-Za-z][A-Za-z0-9\\-]*" + _ATTRIBUTE + "*\\s*\\/?>"
CLOSE_TAG = "<\\/[A-Za-z][A-Za-z0-9\\-]*\\s*>"
_COMMENT = "<!---?>|<!--(?:[^-]|-[^-]|--[^>])*-->"
_PROCESSING = "<[?][\\s\\S]*?[?]>"
_DECLARATION = "<![A-Za-z][^>]*>"
_CDATA = "<!\\[CDATA\\[[\\s\\S]*?\\]\\]>"
HTML_TAG = re.compile("(?:" + "|".join((OPEN_TAG, CLOSE_TAG, _COMMENT, _PROCESSING, _DECLARATION, _CDATA)) + ")")
OPEN_CLOSE_TAG = "^(?:" + OPEN_TAG + "|" + CLOSE_TAG + ")"

AUTOLINK = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]{1,31}):([^<>\x00-\x20]*)$")
EMAIL = re.compile(
    r"^([a-zA-Z0-9.!#$%&\'*+\/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*)$"
)

BLOCK_NAMES = (
    "address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link "
    "main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td tfoot th thead "
    "title tr track ul"
).split()

#: (start, end, may interrupt a paragraph) of markdown-it's seven HTML block kinds, in its order.
HTML_SEQUENCES: list[tuple[re.Pattern[str], re.Pattern[str], bool]] = [
    (
        re.compile(r"^<(?a:(script|pre|style|textarea))(?=(\s|>|$))", re.IGNORECASE),
        re.compile(r"<\/(?a:(script|pre|style|textarea))>", re.IGNORECASE),
        True,
    ),
    (re.compile(r"^<!--"), re.compile(r"-->"), True),
    (re.compile(r"^<\?"), re.compile(r"\?>"), True),
    (re.compile(r"^<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"^<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile("^</?(?a:(" + "|".join(BLOCK_NAMES) + "))(?=(\\s|/?>|$))", re.IGNORECASE), re.compile(r"^$"), True),
    (re.compile(OPEN_CLOSE_TAG + "\\s*$"), re.compile(r"^$"), False),
]

#: The kinds display text reads as blocks: a comment, a block-level tag, a lone tag (not script/pre/style/textarea, ...).
READ_KINDS = frozenset({1, 5, 6})


def html_kind(line: str) -> int | None:
    """Which of markdown-it's HTML block kinds (an index into `HTML_SEQUENCES`) `line` begins, or None."""
    if not line.startswith("<"):
        return None
    return next((kind for kind, (start, _end, _) in enumerate(HTML_SEQUENCES) if start.search(line)), None)


_MD_TRIM = "\t\n\x0b\x0c\r \xa0\u1680\u202f\u205f\u3000\u2028\u2029" + "".join(map(chr, range(0x2000, 0x200B)))
_MD_TRIM_RUN = re.compile("[" + re.escape(_MD_TRIM) + "]+")


def reference_key(label: str) -> str:
    """markdown-it's `normalizeReference`: how a link reference's label finds its definition."""
    return _MD_TRIM_RUN.sub(" ", label.strip(_MD_TRIM)).lower().upper()
