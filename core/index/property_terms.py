"""Typed properties and task states as index terms, and property filters over those terms.

One spelling serves both retrieval lists, so they cannot disagree: the keyword index files a
note's terms in its `props` field and turns a filter into Whoosh term and range queries
(`whoosh_filter`); the vector side keeps the same terms in the manifest and tests them in
Python (`terms_match`). A term is `key` (the note has the property), or `key=<kind>:<value>`
with kind `t` text, `l` list item, `n` number (spelled so that text order is numeric order), `d` date or
date-time, `b` checkbox. Task states are filed under the reserved key `@task`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.base.structured import Op, Property, PropertyFilter, PropertyType, Task
from core.index.whoosh_pin import lean_query

if TYPE_CHECKING:
    from whoosh import query as wq  # a search's: imported by `whoosh_filter`, not by `cairn index`

FIELD = "props"
TASK_KEY = "@task"
_KIND = {
    PropertyType.TEXT: "t",
    PropertyType.LIST: "l",
    PropertyType.NUMBER: "n",
    PropertyType.DATE: "d",
    PropertyType.DATETIME: "d",
    PropertyType.CHECKBOX: "b",
}
_NUMBER_SPAN = 1e15  # numbers beyond ± this sort as the bound: no vault rates notes in quadrillions
_END = "\uffff"


def encode_number(value: float) -> str:
    """A number as fixed-width text whose string order is numeric order (negatives too)."""
    value = max(-_NUMBER_SPAN, min(_NUMBER_SPAN, value))
    return f"{value + _NUMBER_SPAN:034.12f}"


def decode_number(text: str) -> float:
    return float(text) - _NUMBER_SPAN


def property_terms(props: Iterable[Property], tasks: Iterable[Task] = ()) -> tuple[str, ...]:
    """A note's filter terms: one per key, one per typed value, and its task states."""
    out: list[str] = []
    for prop in props:
        out.append(prop.key)
        kind = _KIND[prop.type]
        for value in prop.values:
            out.append(_term(prop.key, kind, value))
    states = {"open" if t.status.is_open else "done" for t in tasks}
    out.extend(f"{TASK_KEY}=t:{s}" for s in sorted(states))
    return tuple(dict.fromkeys(t for t in out if t))


def _term(key: str, kind: str, value: str) -> str:
    if kind == "n":
        value = encode_number(float(value))
    return f"{key}={kind}:{value.replace(',', ' ').strip().lower()}"


def decode_term(term: str) -> tuple[str, str, str] | None:
    """(key, kind, value as written) of a value term; None for a bare key term."""
    key, sep, rest = term.partition("=")
    if not sep or len(rest) < 2 or rest[1] != ":":
        return None
    kind, value = rest[0], rest[2:]
    if kind == "n":
        number = decode_number(value)
        value = str(int(number)) if number.is_integer() else f"{number:g}"
    return key, kind, value


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _date(text: str) -> str | None:
    """A date (`yyyy-mm-dd`) or date-time (`yyyy-mm-ddthh:mm:ss`) as the terms spell it."""
    try:
        return dt.datetime.strptime(text, "%Y-%m-%d").date().isoformat()
    except ValueError:
        pass
    for fmt in ("%Y-%m-%dt%H:%M:%S", "%Y-%m-%dt%H:%M"):
        try:
            return dt.datetime.strptime(text, fmt).isoformat(timespec="seconds").lower()
        except ValueError:
            continue
    return None


def _equal_terms(flt: PropertyFilter) -> tuple[list[str], list[str]]:
    """(exact terms, prefixes) any of which means the property equals the filter's value."""
    key, value = flt.key, flt.value.strip().lower()
    exact = [f"{key}=t:{value.replace(',', ' ')}", f"{key}=l:{value.replace(',', ' ')}"]
    prefixes: list[str] = []
    number = _number(value)
    if number is not None:
        exact.append(f"{key}=n:{encode_number(number)}")
    day = _date(value)
    if day is not None:
        exact.append(f"{key}=d:{day}")
        if len(day) == 10:
            prefixes.append(f"{key}=d:{day}t")  # a date matches every time of that day
    if value in {"true", "false", "yes", "no"}:
        exact.append(f"{key}=b:{'true' if value in {'true', 'yes'} else 'false'}")
    return exact, prefixes


def _range(flt: PropertyFilter) -> tuple[str, str, bool, bool]:
    """(low, high, low excluded, high excluded) in term space for a comparison filter."""
    value = flt.value.strip().lower()
    number = _number(value)
    if number is not None:
        kind, point = "n", encode_number(number)
    else:
        day = _date(value)
        kind, point = ("d", day) if day is not None else ("t", value)
    base = f"{flt.key}={kind}:"
    if flt.op in (Op.LT, Op.LE):
        high = base + point + ("t" + _END if flt.op is Op.LE and kind == "d" and len(point) == 10 else "")
        return base, high, False, flt.op is Op.LT
    low = base + point + ("t" + _END if flt.op is Op.GT and kind == "d" and len(point) == 10 else "")
    return low, base + _END, flt.op is Op.GT, False


def terms_match(terms: frozenset[str] | set[str], flt: PropertyFilter) -> bool:
    """Whether a note with these terms passes the filter (the vector side's test)."""
    return _positive_match(terms, flt) != flt.negate


def _positive_match(terms: frozenset[str] | set[str], flt: PropertyFilter) -> bool:
    if flt.op is Op.HAS:
        return flt.key in terms
    if flt.op in (Op.EQ, Op.NE):
        exact, prefixes = _equal_terms(flt)
        found = any(t in terms for t in exact) or any(t.startswith(p) for p in prefixes for t in terms)
        return found if flt.op is Op.EQ else not found
    low, high, low_x, high_x = _range(flt)
    for term in terms:
        if (term > low or (not low_x and term == low)) and (term < high or (not high_x and term == high)):
            return True
    return False


def whoosh_filter(flt: PropertyFilter) -> wq.Query:
    """The keyword index's form of the same test (`terms_match` is its twin)."""
    lean_query()
    from whoosh import query as wq

    query = _positive_query(flt)
    return wq.Not(query) if flt.negate else query


def _positive_query(flt: PropertyFilter) -> wq.Query:
    from whoosh import query as wq  # imported lean by `whoosh_filter`

    if flt.op is Op.HAS:
        return wq.Term(FIELD, flt.key)
    if flt.op in (Op.EQ, Op.NE):
        exact, prefixes = _equal_terms(flt)
        parts: list[wq.Query] = [wq.Term(FIELD, t) for t in exact] + [wq.Prefix(FIELD, p) for p in prefixes]
        found = wq.Or(parts)
        return found if flt.op is Op.EQ else wq.Not(found)
    low, high, low_x, high_x = _range(flt)
    return wq.TermRange(FIELD, low, high, startexcl=low_x, endexcl=high_x)
