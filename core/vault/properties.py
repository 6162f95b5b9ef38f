"""Every front-matter property of a note, typed the way Obsidian types it.

Obsidian gives each property name one type for the whole vault: the one named in
`.obsidian/types.json` when the vault has that file, otherwise the one its value shows
(a YAML boolean is a checkbox, a number a number, a list a list, a date a date). Cairn
types each value the same way and, where `types.json` names a type, converts to it —
a value that cannot be converted is reported and its key kept, never fatal.
Links written inside properties (`project: "[[Important Project]]"`) come back as links
so the link graph sees them, and their target is the value a filter compares.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.base.models import Link, LinkKind
from core.base.structured import Property, PropertyType

MAX_PROPERTIES = 100  # per note: past that a note is a data dump, not notes
MAX_ITEMS = 50  # per list property
MAX_VALUE_CHARS = 200
_WIKILINK = re.compile(r"!?\[\[([^\[\]|#^]*)(?:[#^][^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")
_KEY_SEPARATORS = re.compile(r"[,=\s]+")
_DATE_LIKE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
_DATETIME_LIKE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}[T ]\d{1,2}:\d{2}(?::\d{2})?$")
_ISO_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2})?)?")  # fullmatch


@dataclass(frozen=True, slots=True)
class PropertyRead:
    """What a note's front matter declares: typed properties, the links in them, and problems."""

    properties: tuple[Property, ...] = ()
    links: tuple[Link, ...] = ()
    problems: tuple[str, ...] = ()


def read_properties(data: Mapping[Any, Any], types: Mapping[str, PropertyType] | None = None) -> PropertyRead:
    """Type every property of a loaded front-matter mapping; `types` are the vault's declared ones."""
    props: list[Property] = []
    links: list[Link] = []
    problems: list[str] = []
    seen: set[str] = set()
    for raw_key, value in data.items():
        key = clean_key(raw_key)
        if not key or key in seen:
            continue
        if len(props) >= MAX_PROPERTIES:
            problems.append(f"more than {MAX_PROPERTIES} properties; the rest are not indexed")
            break
        seen.add(key)
        declared = (types or {}).get(key)
        prop, problem = typed_property(key, value, declared)
        if problem:
            problems.append(problem)
        if prop is None:
            continue
        props.append(prop)
        links.extend(_links(key, value))
    return PropertyRead(tuple(props), tuple(links), tuple(problems))


def clean_key(raw: Any) -> str:
    """A property name as filters spell it: lower-case, no commas or `=` (the index's separators)."""
    return _clean_key(raw if isinstance(raw, str) else str(raw))


@functools.lru_cache(maxsize=4096)
def _clean_key(raw: str) -> str:
    return _KEY_SEPARATORS.sub("_", raw.strip().lower()).strip("_")[:80]


def typed_property(key: str, value: Any, declared: PropertyType | None) -> tuple[Property | None, str | None]:
    """One property typed (as declared, else as its value shows); a problem when a value is bad."""
    if isinstance(value, (dict, set)):
        return None, f"property {key!r} is a nested object; not indexed"
    if value is None or value == "" or value == []:
        return Property(key, declared or PropertyType.TEXT, ()), None
    kind = declared or infer_type(value)
    if kind is PropertyType.TEXT and isinstance(value, str):  # the common case, kept short
        return Property(key, kind, (_text(value),)), None
    items = value if isinstance(value, list) else [value]
    items = [v for v in items if v is not None and not isinstance(v, (list, dict, set))][:MAX_ITEMS]
    if kind is not PropertyType.LIST and isinstance(value, list) and len(items) > 1:
        return Property(key, PropertyType.LIST, tuple(_text(v) for v in items)), (
            f"property {key!r} is declared {kind.value} but holds a list; read as a list"
        )
    out: list[str] = []
    bad: list[str] = []
    for item in items:
        text = convert(item, kind)
        if text is None:
            bad.append(_text(item))
        else:
            out.append(text)
    problem = f"property {key!r}: {', '.join(repr(b) for b in bad[:3])} is not a valid {kind.value}; skipped" if bad else None
    return Property(key, kind, tuple(dict.fromkeys(out))), problem


def infer_type(value: Any) -> PropertyType:
    """The type Obsidian shows for a value when the vault declares none."""
    if isinstance(value, list):
        return PropertyType.LIST
    if isinstance(value, bool):
        return PropertyType.CHECKBOX
    if isinstance(value, (int, float)):
        return PropertyType.NUMBER
    if isinstance(value, dt.datetime):
        return PropertyType.DATETIME
    if isinstance(value, dt.date):
        return PropertyType.DATE
    text = str(value).strip()
    if _DATE_LIKE.match(text):
        return PropertyType.DATE  # a quoted or impossible date: still a date, checked by `convert`
    if _DATETIME_LIKE.match(text):
        return PropertyType.DATETIME
    return PropertyType.TEXT


def convert(value: Any, kind: PropertyType) -> str | None:
    """`value` in `kind`'s canonical text form, or None when it is not one."""
    if kind in (PropertyType.TEXT, PropertyType.LIST):
        return _text(value)
    if kind is PropertyType.NUMBER:
        return _number(value)
    if kind is PropertyType.CHECKBOX:
        if isinstance(value, bool):
            return "true" if value else "false"
        text = str(value).strip().lower()
        return text if text in {"true", "false"} else None
    if kind is PropertyType.DATE:
        return _date(value, with_time=False)
    return _date(value, with_time=True)


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _text(value: Any) -> str:
    text = _SURROGATE.sub("\ufffd", str(value).strip())  # YAML escapes can make lone surrogates
    link = _WIKILINK.fullmatch(text) if "[[" in text else None
    if link:
        text = link.group(1).strip()  # a link's value is its target: `project:"Important Project"`
    return text[:MAX_VALUE_CHARS]


def _number(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


def _date(value: Any, *, with_time: bool) -> str | None:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(timespec="seconds") if with_time else value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip().replace(" ", "T")
    parsed = _iso_datetime(text) if _ISO_DATETIME.fullmatch(text) else None
    if parsed is None:
        parsed = _by_formats(text)
    if parsed is None:
        return None
    return parsed.isoformat(timespec="seconds") if with_time and "T" in text else parsed.date().isoformat()


def _iso_datetime(text: str) -> dt.datetime | None:
    """`_by_formats(text)` for text of `_ISO_DATETIME`'s shape, without `strptime` (its module, `_strptime`,
    cost ~0.8 ms to import in each process of a parallel build): each field has the digits the first
    format that fits the shape reads, and the earlier ones need a field more. None (ask `_by_formats`)
    for a value that is not a time (month 13, February 30)."""
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def _by_formats(text: str) -> dt.datetime | None:
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _links(key: str, value: Any) -> list[Link]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if not isinstance(item, str) or "[[" not in item:
            continue
        for m in _WIKILINK.finditer(item):
            target = m.group(1).strip()
            if target:
                out.append(Link(LinkKind.WIKI, target, label=target, line=1, context=f"{key}: {item.strip()}"[:200]))
    return out
