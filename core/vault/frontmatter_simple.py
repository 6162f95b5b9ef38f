"""Front matter in the shapes Obsidian notes use, read without a YAML parser.

Obsidian writes properties as `key: value` lines, `key: [a, b]` and `key:` followed by
`- item` lines; plugins and other tools add nested mappings (`key:` above indented
`sub: value` lines), lists of mappings (`- name: x` with more keys under it), empty items
(`-`), one-line flow mappings (`key: {a: 1}`) and JSON front matter (`{"tags": "x"}` over
several lines). Loading those with libyaml still cost ~a quarter of parsing such a note, and
a block libyaml declined imported PyYAML's own parser (~10 ms). This reader takes a block only
when every line is one of those shapes, each nested node indented as YAML's block rules place
it, and every value is a quoted string without escapes, a literal block scalar in its plainest
form (`key: |`, `|-` or `|+` above lines indented further than the key), or a plain scalar
that PyYAML's own resolver types as text, null, a boolean, a plain decimal integer or float,
a `YYYY-MM-DD` date or Obsidian's `YYYY-MM-DDTHH:MM:SS` date & time
(`core.vault.frontmatter_scalars`); anything else (comments, anchors, tags, folded or
indicated block scalars, multi-line plain scalars, escapes, CR, tabs, characters YAML treats
specially, an indentation YAML would reject) gives `NOT_SIMPLE` and the YAML loader reads
the block as it always did. Compared with the loader on every real note's front matter and on
generated blocks in the tests.
"""

from __future__ import annotations

import re
from typing import Any

from core.vault.frontmatter_scalars import NOT_SIMPLE, flow_mapping, read_value, scalar, usable_key

__all__ = ["NOT_SIMPLE", "load_simple"]

_KEY_LINE = re.compile(r"([^\s\-?:,\[\]{}#&*!|>'\"%@`][^:#]*?):(?: +(.*?))? *")
# Characters outside YAML's printable set, YAML 1.1's extra line breaks (NEL, LS, PS), BOM, CR, tab:
# everything but "\n", " "-"~", "\xa0"-"\u2027", "\u202a"-"\ud7ff", "\ue000"-"\ufefe", "\uff00"-"\ufffd" and
# the astral planes, spelled out (as the negated class it was, it took ~5 ms to compile at import).
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
# A literal block scalar's header (`key: |`) and its chomping: clip, strip or keep the final line breaks.
_LITERAL_CHOMPING = {"|": "clip", "|-": "strip", "|+": "keep"}
_MAX_KEY = 1000  # YAML's simple-key limit
_FLOW_LINE_ENDS = ("{", ",")


class _Declined(Exception):
    """The block is not in a shape read here: the YAML loader reads it."""


def load_simple(text: str) -> Any:
    """The value PyYAML would load from `text`, or `NOT_SIMPLE` if the block is not a simple shape."""
    if _UNSAFE.search(text):
        return NOT_SIMPLE
    lines = text.split("\n")
    start = _next(lines, 0)
    if start == len(lines):
        return None
    try:
        if lines[start].startswith("{"):
            return _flow_document(lines[start:])
        if lines[start][0] == " ":
            raise _Declined
        data, end = _mapping(lines, start, 0)
    except _Declined:
        return NOT_SIMPLE
    return data if end == len(lines) else NOT_SIMPLE


def _next(lines: list[str], i: int) -> int:
    """The first line from `i` that is not blank (or the end)."""
    while i < len(lines) and not lines[i].strip(" "):
        i += 1
    return i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _checked(value: Any) -> Any:
    if value is NOT_SIMPLE:
        raise _Declined
    return value


def _mapping(lines: list[str], i: int, column: int, head: str | None = None) -> tuple[dict[Any, Any], int]:
    """A block mapping whose keys sit at `column`, from line `i`, and the line after it.

    `head` is the first key line's text when it follows a sequence's `- ` on its line (a list of
    mappings); the other keys sit under it. A line indented further than the keys is no key: a
    multi-line scalar or an error, either way the loader's to read.
    """
    data: dict[Any, Any] = {}
    while i < len(lines):
        if head is None:
            indent = _indent(lines[i])
            if indent < column:
                break
            if indent > column:
                raise _Declined
        m = _KEY_LINE.fullmatch(lines[i][column:] if head is None else head)
        if m is None or len(m.group(1)) >= _MAX_KEY:
            raise _Declined
        key = scalar(m.group(1))
        if not usable_key(key):
            raise _Declined
        value, i = _key_value(lines, i + 1, column, m.group(2))
        data[key] = value
        i, head = _next(lines, i), None
    return data, i


def _key_value(lines: list[str], i: int, column: int, text: str | None) -> tuple[Any, int]:
    """The value after a `key:` at `column` whose line is followed by line `i`, and the line after it.

    Text after the colon is the value (a literal block scalar's lines follow it); after a bare
    `key:` an indented node, or a sequence at the key's own column, is; else the value is null.
    """
    if text:
        if text in _LITERAL_CHOMPING:
            return _literal(lines, i, _LITERAL_CHOMPING[text], column)
        return _checked(read_value(text)), _after_scalar(lines, i, column)
    j = _next(lines, i)
    if j < len(lines):
        indent = _indent(lines[j])
        if indent > column:
            return _node(lines, j, indent)
        if indent == column and _is_item(lines[j], column):
            return _sequence(lines, j, column)
    return None, i


def _after_scalar(lines: list[str], i: int, column: int) -> int:
    """Line `i`, after a scalar of a node at `column`: the next text must not sit further in (a
    plain scalar going on over lines, or YAML's error)."""
    j = _next(lines, i)
    if j < len(lines) and _indent(lines[j]) > column:
        raise _Declined
    return i


def _node(lines: list[str], i: int, column: int) -> tuple[Any, int]:
    """The block node at line `i`, indented to `column`: a sequence or a mapping."""
    if _is_item(lines[i], column):
        return _sequence(lines, i, column)
    return _mapping(lines, i, column)


def _is_item(line: str, column: int) -> bool:
    return line.startswith("-", column) and (len(line) == column + 1 or line[column + 1] == " ")


def _sequence(lines: list[str], i: int, column: int) -> tuple[list[Any], int]:
    """A block sequence whose `- ` sit at `column`, from line `i`, and the line after it.

    An item holds a scalar or flow collection on its line, a mapping starting there (`- key: v`,
    its other keys under the first), an indented node on the lines below a bare `-`, or null.
    A nested `- - x`, a block scalar or anything else is the loader's.
    """
    items: list[Any] = []
    while i < len(lines):
        line = lines[i]
        indent = _indent(line)
        if indent < column or (indent == column and not _is_item(line, column)):
            break  # a key at the sequence's column: the mapping holding it goes on
        if indent > column:
            raise _Declined
        text = line[column + 1 :].lstrip(" ")
        if not text:
            value, i = _bare_item(lines, i + 1, column)
        elif text[0] in "-|>":
            raise _Declined
        elif _KEY_LINE.fullmatch(text):
            value, i = _mapping(lines, i, len(line) - len(text), head=text)
        else:
            value, i = _checked(read_value(text.rstrip(" "))), _after_scalar(lines, i + 1, column)
        items.append(value)
        i = _next(lines, i)
    return items, i


def _bare_item(lines: list[str], i: int, column: int) -> tuple[Any, int]:
    """The value of a `-` alone on its line at `column`: the node indented under it, or null."""
    j = _next(lines, i)
    if j < len(lines) and _indent(lines[j]) > column:
        return _node(lines, j, _indent(lines[j]))
    return None, i


def _flow_document(lines: list[str]) -> Any:
    """Front matter that is one flow mapping (JSON-style), its line breaks only after `{` or `,` or
    before the closing `}` (where YAML reads a break as a space); `flow_mapping` reads the joined line."""
    texts = [line.strip(" ") for line in lines if line.strip(" ")]
    if any(not (text.endswith(_FLOW_LINE_ENDS) or after == "}") for text, after in zip(texts, texts[1:], strict=False)):
        raise _Declined
    return _checked(flow_mapping(" ".join(texts)))


def _literal(lines: list[str], i: int, chomping: str, column: int) -> tuple[Any, int]:
    """The text of a literal block scalar whose key sits at `column` and whose lines start at `i`,
    and the line after it.

    Read only in its plainest form: its first line holds text, indented by spaces further than
    the key, and sets the block's indentation; the block runs over the lines indented at least
    that far and blank lines, each losing that indentation (a longer run of spaces stays, as
    YAML keeps it). A header with an indentation indicator or a comment, or a block starting
    with a blank line, is not simple (its indentation is YAML's to work out).
    """
    first = lines[i] if i < len(lines) else ""
    indent = _indent(first)
    if indent <= column or not first.strip(" "):
        raise _Declined
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
