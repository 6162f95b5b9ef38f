"""Property filters as typed in the query box, `--where`, MCP and golden sets.

One syntax everywhere, in the style of `tag:`/`folder:`:
`status:draft` (equals), `-status:done` (does not), `rating>=4`, `due<2026-12-01`,
`status!=done`, `has:project`, `-has:project`, `task:open` / `task:done` (notes with
open or finished tasks). A value with spaces is quoted: `project:"Big launch"`. Keys are
property names, case-insensitive; a value is compared by its type (numbers as numbers,
dates as dates).
"""

from __future__ import annotations

import re

from core.base.structured import Op, PropertyFilter
from core.index.property_terms import TASK_KEY
from core.vault.properties import clean_key

# -key OP value, where OP is a comparison or ':' (the key starts with a letter: "10:30" is a time).
PROPERTY_TOKEN = r'(-?)([^\W\d][\w\-]*)(>=|<=|!=|>|<|=|:)(?:"([^"]*)"|(\S+))'
_WHERE = re.compile(r"^\s*(?:" + PROPERTY_TOKEN + r"|(-?)has:\s*(\S+))\s*$", re.UNICODE)
TASK_STATES = ("open", "done")


def property_filter(negate: str, key: str, op: str, value: str) -> tuple[PropertyFilter | None, str | None]:
    """A filter from a matched `-key OP value`, or (None, warning) when it cannot be one."""
    name = key.lower()
    neg = negate == "-"
    if op == ":" and name == "has":
        return PropertyFilter(clean_key(value), Op.HAS, negate=neg), None
    if op == ":" and name == "task":
        state = value.lower()
        if state not in TASK_STATES:
            return None, f"task:{value} is not a task state (use task:open or task:done); filter ignored"
        return PropertyFilter(TASK_KEY, Op.EQ, state, negate=neg), None
    if name == "tag":
        name = "tags"  # `-tag:x` and `tag!=x`: the tags property, which holds every front-matter tag
    if not value.strip():
        return None, f"{key}{op} has no value; filter ignored"
    return PropertyFilter(clean_key(name), Op.EQ if op in (":", "=") else Op(op), value.strip(), negate=neg), None


def parse_where(text: str) -> PropertyFilter:
    """One `--where` condition (`status=draft`, `rating>=4`, `has:project`).

    Raises:
        ValueError: the text is not a condition; the message shows the forms that are.
    """
    m = _WHERE.match(text)
    if m is not None:
        flt: PropertyFilter | None
        if m.group(7) is not None:
            flt, warning = PropertyFilter(clean_key(m.group(7)), Op.HAS, negate=m.group(6) == "-"), None
        else:
            value = m.group(4) if m.group(4) is not None else m.group(5)
            flt, warning = property_filter(m.group(1), m.group(2), m.group(3), value)
        if flt is not None:
            return flt
        raise ValueError(warning)
    raise ValueError(f"{text!r} is not a property condition: use KEY=VALUE, KEY!=VALUE, KEY<VALUE (<=, >, >=) or has:KEY")


def parse_wheres(texts: list[str] | tuple[str, ...] | None) -> tuple[PropertyFilter, ...]:
    """Several `--where` conditions (all must hold); ValueError names the first bad one."""
    return tuple(parse_where(t) for t in texts or ())
