"""Scalars and flow collections of simple front matter, typed as PyYAML's SafeLoader types them.

Split from `core.vault.frontmatter_simple` (which reads the block structure: mappings,
sequences, literal block scalars). Every function here returns `NOT_SIMPLE` where it is not
sure of the loader's value, and the caller then leaves the whole block to the YAML loader.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

NOT_SIMPLE = object()

_QUOTED = re.compile(r"\"([^\"\\]*)\"|'([^']*)'")
_PLAIN = re.compile(r"[^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^:#]|:(?=[^\s]))*")
_FLOW_ITEM = re.compile(r" *(?:\"([^\"\\]*)\"|'([^']*)'|([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#,\[\]{}\"']*?)) *(,|\]\Z)")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})")  # Obsidian's "Date & time"
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
_BOOLS = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_TAG = "tag:yaml.org,2002:"


def read_value(text: str) -> Any:
    """A value after `key: ` or `- ` on its line: a flow list, a flow mapping or one scalar."""
    if text.startswith("["):
        return _flow_list(text)
    if text.startswith("{"):
        return flow_mapping(text)
    return scalar(text)


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
_FLOW_PLAIN_KEY = r"[^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#,\[\]{}\"']*?"
_FLOW_ENTRY = re.compile(
    rf" *(?:\"([^\"\\]*)\"|'([^']*)'|({_FLOW_PLAIN_KEY})): +(?:\"([^\"\\]*)\"|'([^']*)'|({_FLOW_PLAIN_KEY})) *(,|\}}\Z)"
)
_EMPTY_MAPPING = re.compile(r"\{ *\}")


def flow_mapping(text: str) -> Any:
    """`{a: 1, "b": "x"}` of scalar keys and values (JSON-style front matter too); `{}`. Nested
    collections, keys without `: `, empty entries, trailing commas, escapes: not simple."""
    if _EMPTY_MAPPING.fullmatch(text):
        return {}
    out: dict[Any, Any] = {}
    pos = 1
    while pos < len(text):
        m = _FLOW_ENTRY.match(text, pos)
        if m is None:
            return NOT_SIMPLE
        key = _flow_scalar(m.group(1), m.group(2), m.group(3))
        value = _flow_scalar(m.group(4), m.group(5), m.group(6))
        if value is NOT_SIMPLE or not usable_key(key):
            return NOT_SIMPLE
        out[key] = value
        pos = m.end()
        if m.group(7) == "}":
            return out
    return NOT_SIMPLE


def _flow_scalar(double: str | None, single: str | None, plain: str | None) -> Any:
    if plain is not None:
        return _typed(plain.rstrip())
    return double if double is not None else single


def usable_key(key: Any) -> bool:
    """Whether a key read here is one the loader makes the same way: text, a bool, an int or a date
    (not null, a float, a date & time or a collection, nor a value this reader declined)."""
    return key is not NOT_SIMPLE and key is not None and not isinstance(key, (list, dict, float, dt.datetime))


def _quoted(m: re.Match[str]) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


def scalar(text: str) -> Any:
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
    float pattern (no "." or ":"), a date no integer pattern. Anything else is matched against
    the resolver's own patterns (`_IMPLICIT`), without importing `yaml`.
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
    return next((tag for tag, pattern in _implicit_resolvers().get(first, ()) if pattern.match(text)), _TAG + "str")


# PyYAML's implicit resolvers for plain scalars, as `yaml/resolver.py` registers them (tag, pattern,
# first characters), in its order; a test holds this copy to the installed release's table.
_IMPLICIT = (
    ("bool", r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""", "yYnNtTfFoO"),
    ("float", r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", "-+0123456789."),
    ("int", r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", "-+0123456789"),
    ("merge", r"^(?:<<)$", "<"),
    ("null", r"""^(?: ~
                    |null|Null|NULL
                    | )$""", ("~", "n", "N", "")),
    ("timestamp", r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", "0123456789"),
    ("value", r"^(?:=)$", "="),
    ("yaml", r"^(?:!|&|\*)$", "!&*"),
)
_VERBOSE = frozenset(("bool", "float", "int", "null", "timestamp"))  # registered with re.X


@functools.cache
def _implicit_resolvers() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """`_IMPLICIT` by first character, compiled on the first value the shortcuts in `_tag` leave
    (a version string, a time): asking PyYAML's resolver imported `yaml` (~10 ms) for it."""
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for name, pattern, firsts in _IMPLICIT:
        compiled = re.compile(pattern, re.X if name in _VERBOSE else 0)
        for first in firsts:
            table.setdefault(first, []).append((_TAG + name, compiled))
    return table
