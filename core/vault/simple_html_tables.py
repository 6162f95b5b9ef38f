"""HTML blocks and GFM tables as markdown-it finds them, for the plain-note scanner.

Obsidian notes are full of both: comments left by publishing tools (`<!-- … -->`),
`<span>`/`<div>` lines, and tables. Without them the scanner handed such a note to
markdown-it's whole block pass. These helpers give exactly the line ranges (and, for a
table, the cells' inline texts) that markdown-it's `html_block` and `table` rules give
at the top level of a note or quote, and decline (None) wherever they are unsure; the
scanner's differential tests hold them to markdown-it on real and generated notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.vault.display_html import HTML_SEQUENCES

if TYPE_CHECKING:
    from re import Pattern

_DELIMITER_CELL = re.compile(r"^:?-+:?$")
_MD_TRIM = " \t\n\r\x0b\x0c"  # markdown-it's mdTrim set as far as a scanned line can hold it
_MAX_FILLED_IN = 0x10000  # markdown-it's MAX_AUTOCOMPLETED_CELLS


def _html_sequences() -> list[tuple[Pattern[str], Pattern[str], bool]]:
    """markdown-it's own start/end patterns for HTML blocks: `core.vault.display_html`'s copy, held to
    the installed release by its test. Importing them from markdown-it (`rules_block.html_block`)
    ran the package's `__init__`, the whole parser: ~12 ms of a cold `cairn index` of notes the
    scanner reads all by itself, paid at the first note with an HTML line."""
    return HTML_SEQUENCES


def html_kind(line: str) -> int | None:
    """Which of markdown-it's HTML block kinds `line` (at a block's first column) begins, or None.

    Kinds 0–5 (script/pre/style/textarea, comment, processing instruction, declaration,
    CDATA, a block-level tag) may interrupt a paragraph; kind 6 (any other lone tag) may not.
    """
    if not line.startswith("<"):
        return None
    for kind, (start, _end, _interrupts) in enumerate(_html_sequences()):
        if start.search(line):
            return kind
    return None


def html_end(lines: list[str], start: int, kind: int) -> int:
    """The line after the HTML block of `kind` that begins at `start` (markdown-it's `map` end).

    Kinds 5 and 6 end before the first blank line; the others after the line holding their
    closing sequence, blank lines included, or at the end of the note.
    """
    end_pattern = _html_sequences()[kind][1]
    if end_pattern.search(lines[start]):
        return start + 1
    j = start + 1
    while j < len(lines):
        text = lines[j].lstrip(" \t")
        if end_pattern.search(text):
            return j + 1 if text else j
        j += 1
    return j


def interrupts_paragraph(line: str) -> bool:
    """Whether an HTML block begins at `line` even in the middle of a paragraph."""
    kind = html_kind(line)
    return kind is not None and _html_sequences()[kind][2]


def split_row(line: str) -> list[str]:
    """markdown-it's escapedSplit of a trimmed row, without the empty cells an outer pipe leaves."""
    if "\\" not in line:
        cells = line.split("|")
    else:
        cells = split_escaped(line)
    if cells and cells[0] == "":
        cells.pop(0)
    if cells and cells[-1] == "":
        cells.pop()
    return cells


def split_escaped(line: str) -> list[str]:
    """Cells split at pipes that no backslash escapes; an escaped pipe stays, unescaped."""
    cells: list[str] = []
    current, last, escaped = "", 0, False
    for pos, ch in enumerate(line):
        if ch == "|":
            if not escaped:
                cells.append(current + line[last:pos])
                current, last = "", pos + 1
            else:
                current += line[last : pos - 1]
                last = pos
        escaped = ch == "\\"
    cells.append(current + line[last:])
    return cells


def delimiter_columns(line: str) -> int | None:
    """How many columns a table's delimiter row declares, or None if `line` is no delimiter row."""
    if len(line) < 2 or line[0] not in "|-:" or (line[1] not in "|-: \t"):
        return None
    if line[0] == "-" and line[1] in " \t":
        return None  # a list item, not a delimiter row
    if any(ch not in "|-: \t" for ch in line):
        return None
    columns = line.split("|")
    count = 0
    for k, column in enumerate(columns):
        cell = column.strip(_MD_TRIM)
        if not cell:
            if k in (0, len(columns) - 1):
                continue
            return None
        if not _DELIMITER_CELL.search(cell):
            return None
        count += 1
    return count


def table_header(lines: list[str], start: int) -> list[str] | None:
    """The header cells if a table begins at `start` (a line at the first column), else None."""
    if start + 1 >= len(lines) or "|" not in lines[start]:
        return None
    if lines[start + 1][:1] in (" ", "\t"):
        return None  # an indented delimiter row: left to markdown-it
    count = delimiter_columns(lines[start + 1])
    if count is None:
        return None
    header = split_row(lines[start].strip(_MD_TRIM))
    return header if header and len(header) == count else None


def table_interrupts(lines: list[str], line: int) -> bool:
    """Whether a table beginning at `line` (its first column) ends the paragraph above it (markdown-it's
    table rule interrupts one), the paragraph's last line being no table header itself (then the
    table would begin there, `line` its delimiter row: left to markdown-it)."""
    if lines[line][:1] in (" ", "\t") or table_header(lines, line) is None:
        return False
    return table_header(lines, line - 1) is None


def table_rows(
    lines: list[str], start: int, columns: int, is_row: Callable[[str], bool], ends: Callable[[str], bool]
) -> tuple[int, list[tuple[int, list[str]]]] | None:
    """The end line and the body rows (line, cells) of the table whose header is at `start`.

    A row is a line `is_row` accepts; the table ends at a blank line, the note's end or a line
    `ends` names (one that begins another block); any other line is left to markdown-it (None).
    """
    rows: list[tuple[int, list[str]]] = []
    filled_in = 0  # cells markdown-it adds to short rows; past its cap it ends the table early
    j = start + 2
    while j < len(lines):
        line = lines[j]
        if not line.strip(" \t") or ends(line):
            break
        if not is_row(line):
            return None
        cells = split_row(line.strip(_MD_TRIM))
        filled_in += columns - len(cells)
        if filled_in > _MAX_FILLED_IN:
            return None
        rows.append((j, [cells[k].strip(_MD_TRIM) if k < len(cells) else "" for k in range(columns)]))
        j += 1
    return j, rows
