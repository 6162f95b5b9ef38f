"""Front matter in the few shapes nearly every Obsidian note uses, read without a YAML parser.

Obsidian writes properties as `key: value` lines, `key: [a, b]` and `key:` followed by
`- item` lines. Loading those with libyaml still cost ~a quarter of parsing such a note: the
C parser is quick, but PyYAML builds every value in Python. This reader takes a block only
when every line is one of those shapes and every value is a quoted string without escapes, a
literal block scalar in its plainest form (`key: |`, `|-` or `|+` above lines indented by
spaces: Obsidian's multi-line text, the Tasks plugin's query properties), or a plain scalar
that PyYAML's own resolver types as text, null, a boolean, a plain decimal integer or float,
a `YYYY-MM-DD` date or Obsidian's `YYYY-MM-DDTHH:MM:SS` date & time; anything else
(comments, anchors, tags, folded or indicated block scalars, multi-line plain scalars,
escapes, CR, tabs, characters YAML treats specially) gives None and the YAML loader reads the block as it always did. Compared with the loader on every real
note's front matter and on generated blocks in the tests.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yaml.resolver import Resolver

NOT_SIMPLE = object()

_KEY_LINE = re.compile(r"([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#]*?):(?: +(.*?))? *")
_ITEM_LINE = re.compile(r"( *)- +(.*?) *")
# Characters outside YAML's printable set, YAML 1.1's extra line breaks (NEL, LS, PS), BOM, CR, tab:
# everything but "\n", " "-"~", "\xa0"-"\u2027", "\u202a"-"\ud7ff", "\ue000"-"\ufefe", "\uff00"-"\ufffd" and
# the astral planes, spelled out (as the negated class it was, it took ~5 ms to compile at import).
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_QUOTED = re.compile(r"\"([^\"\\]*)\"|'([^']*)'")
_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^:#]|:(?=[^\s]))*")
_FLOW_ITEM = re.compile(r" *(?:\"([^\"\\]*)\"|'([^']*)'|([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#,\[\]{}\"']*?)) *(,|\]\Z)")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})")  # Obsidian's "Date & time"
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
_BOOLS = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_TAG = "tag:yaml.org,2002:"


def load_simple(text: str) -> Any:
    """The value PyYAML would load from `text`, or `NOT_SIMPLE` if the block is not a simple shape."""
    if _UNSAFE.search(text):
        return NOT_SIMPLE
    data: dict[Any, Any] = {}
    key: Any = NOT_SIMPLE  # the key whose value is still open (a `key:` line with nothing after it)
    items: list[Any] | None = None
    item_indent = -1
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        m = None if line[0] != " " and line[0] != "-" else _ITEM_LINE.fullmatch(line)
        if m is not None:
            if key is NOT_SIMPLE or (items and len(m.group(1)) != item_indent):
                return NOT_SIMPLE
            value = _scalar(m.group(2))
            if value is NOT_SIMPLE:
                return NOT_SIMPLE
            if items is None:
                items, item_indent = [], len(m.group(1))
                data[key] = items
            items.append(value)
            continue
        m = _KEY_LINE.fullmatch(line)
        if m is None:
            return NOT_SIMPLE
        key = _scalar(m.group(1)) if len(m.group(1)) < 1000 else NOT_SIMPLE  # YAML's simple-key limit
        if key is NOT_SIMPLE or isinstance(key, (list, float, dt.datetime)) or key is None:
            return NOT_SIMPLE
        items = None
        value, i = _after_key(m.group(2), lines, i)
        if value is NOT_SIMPLE:
            return NOT_SIMPLE
        data[key] = value
        if m.group(2):
            key = NOT_SIMPLE  # a `key:` line alone stays open for the `- item` lines below it
    return data or None


def _after_key(text: str | None, lines: list[str], i: int) -> tuple[Any, int]:
    """The value after `key:` (None if nothing follows it) and the line after it: a literal block
    scalar's text runs over the lines from `i`, any other value is on the key's line."""
    if not text:
        return None, i
    if text in _LITERAL_CHOMPING:
        return _literal(lines, i, _LITERAL_CHOMPING[text])
    return _value(text), i


# A literal block scalar's header (`key: |`) and its chomping: clip, strip or keep the final line breaks.
_LITERAL_CHOMPING = {"|": "clip", "|-": "strip", "|+": "keep"}


def _literal(lines: list[str], i: int, chomping: str) -> tuple[Any, int]:
    """The text of a literal block scalar whose lines start at `i`, and the line after it.

    Read only in its plainest form: its first line holds text, indented by spaces, and sets the
    block's indentation; the block runs over the lines indented at least that far and blank
    lines, each losing that indentation (a longer run of spaces stays, as YAML keeps it). A
    header with an indentation indicator or a comment, or a block starting with a blank line, is
    not simple (its indentation is YAML's to work out).
    """
    first = lines[i] if i < len(lines) else ""
    indent = len(first) - len(first.lstrip(" "))
    if indent == 0 or not first.strip(" "):
        return NOT_SIMPLE, i
    body: list[str] = []
    end = i
    while end < len(lines) and (lines[end].startswith(" " * indent) or not lines[end].strip(" ")):
        body.append(lines[end][indent:])
        end += 1
    if end == len(lines):  # the front matter's text ends with a line break: no line after it
        body.pop()
    while body and not body[-1]:
        body.pop()
    trailing = end - i - len(body) - (end == len(lines))  # blank lines after the last text line
    text = "\n".join(body)
    if chomping == "clip":
        text += "\n"
    elif chomping == "keep":
        text += "\n" * (1 + trailing)
    return text, end


def _value(text: str) -> Any:
    """A value after `key: `: a flow list or one scalar."""
    if text.startswith("["):
        return _flow_list(text)
    return _scalar(text)


def _flow_list(text: str) -> Any:
    """`[a, "b", 'c']` of scalars; `[]`. Nested collections, empty items, trailing commas: not simple."""
    if _EMPTY_FLOW.fullmatch(text):
        return []
    out: list[Any] = []
    pos = 1
    while pos < len(text):
        m = _FLOW_ITEM.match(text, pos)
        if m is None:
            return NOT_SIMPLE
        value = _typed(m.group(3).rstrip()) if m.group(3) is not None else _quoted(m)
        if value is NOT_SIMPLE:
            return NOT_SIMPLE
        out.append(value)
        pos = m.end()
        if m.group(4) == "]":
            return out
    return NOT_SIMPLE


_EMPTY_FLOW = re.compile(r"\[ *\]")


def _quoted(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def _scalar(text: str) -> Any:
    """A quoted string without escapes, or a plain scalar (typed as PyYAML types it).

    Short ones are cached: keys and many values (`status: done`, tags) repeat across a
    vault's notes, and every value returned is immutable. Long ones are not kept: a cache of
    4,096 front-matter essays would hold megabytes for nothing."""
    return _short_scalar(text) if len(text) <= _CACHED_CHARS else _read_scalar(text)


_CACHED_CHARS = 120


def _read_scalar(text: str) -> Any:
    m = _QUOTED.fullmatch(text)
    if m is not None:
        return _quoted(m)
    if not _PLAIN.fullmatch(text) or text.endswith((":", " ")):
        return NOT_SIMPLE
    return _typed(text)


def _typed(text: str) -> Any:
    """A plain scalar as PyYAML's SafeLoader builds it, for the types read here; others are not simple."""
    tag = _tag(text)
    if tag == _TAG + "str":
        return text
    if tag == _TAG + "null":
        return None
    if tag == _TAG + "bool":
        return _BOOLS[text.lower()]
    if tag == _TAG + "int" and _INT.fullmatch(text):
        return int(text)
    if tag == _TAG + "float" and _FLOAT.fullmatch(text):
        return float(text)
    if tag == _TAG + "timestamp" and (m := _DATE.fullmatch(text)):
        try:
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return text  # as the loader's timestamp constructor keeps an impossible date: text
    if tag == _TAG + "timestamp" and (m := _DATETIME.fullmatch(text)):
        try:
            year, month, day, hour, minute, second = map(int, m.groups())
            return dt.datetime(year, month, day, hour, minute, second)  # noqa: DTZ001 - naive, as PyYAML builds it
        except ValueError:
            return NOT_SIMPLE  # the loader's constructor raises: its error is the note's
    return NOT_SIMPLE


_short_scalar = functools.lru_cache(maxsize=4096)(_read_scalar)

# The first characters PyYAML's implicit resolvers are registered for (`Resolver.add_implicit_resolver`).
_RESOLVED_FIRST = frozenset("yYnNtTfFoO-+0123456789.<~=!&*")
_WORD_FIRST = frozenset("yYnNtTfFoO")  # only the bool resolver, and for "n"/"N" the null one, start so
_BOOL_WORDS = frozenset("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF".split())
_NULL_WORDS = frozenset(("null", "Null", "NULL"))


def _tag(text: str) -> str:
    """The tag PyYAML's resolver gives a plain scalar, without importing `yaml` (~20 ms) for the
    common values: text, YAML 1.1's bool and null words, dates, plain integers and decimals.

    The resolver tries the resolvers registered for the value's first character, in order
    (bool, float, int, merge, null, timestamp, value): a date or a plain integer matches no
    float pattern (no "." or ":"), a date no integer pattern. Anything else asks the resolver.
    """
    first = text[:1]
    if first not in _RESOLVED_FIRST:  # "" is in every set: the empty value asks the resolver
        return _TAG + "str"
    if first in _WORD_FIRST:
        return _TAG + ("bool" if text in _BOOL_WORDS else "null" if text in _NULL_WORDS else "str")
    if _DATE.fullmatch(text) or _DATETIME.fullmatch(text):
        return _TAG + "timestamp"
    if _INT.fullmatch(text):
        return _TAG + "int"
    if _FLOAT.fullmatch(text):
        return _TAG + "float"
    return str(_resolver().resolve(_scalar_node(), text, (True, False)))


@functools.cache
def _resolver() -> Resolver:
    from yaml.resolver import Resolver

    return Resolver()


@functools.cache
def _scalar_node() -> type:
    from yaml.nodes import ScalarNode

    return ScalarNode
