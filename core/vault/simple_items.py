"""List items that hold more than a line of text, for the plain-note scanner.

Documentation notes number their steps and put a fenced code block, an image or a nested
list under a step, often after a blank line. In CommonMark such an item is a container: its
lines, less the item's text column of indentation, are blocks of their own, and a paragraph
in it may go on "lazily" on a line indented less. `item_lines` cuts an item's lines out that
way so that the scanner can read them as a note of its own, exactly as markdown-it's list
rule hands them to its block pass; it declines (None) where it would have to count tabs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from core.vault.simple_lines import item_marker, spaced_item
from core.vault.simple_note import SimpleBlock


class ItemLines(NamedTuple):
    """An item's lines as a note of their own, and where the item ends."""

    inner: list[str]  # the item's lines from its text column on (its first line from after the marker)
    lazy: list[int]  # which inner lines are lazy (indented less): each must go on with a paragraph
    end: int  # the first line after the item (after any blank lines that follow it)
    apart: bool  # whether blank lines come between the item and the line at `end`


def item_lines(lines: list[str], start: int, width: int, goes_on: Callable[[str], bool]) -> ItemLines | None:
    """The lines of the item whose marker is at the first column of line `start` and whose text
    begins at column `width`.

    A line indented by `width` spaces or more belongs to the item (blank lines between such
    lines too); a line indented less belongs to it only as a lazy line: right after a line of
    the item, no list marker, and text that `goes_on` a paragraph. Anything else ends the item.
    Lines indented by tabs are left to markdown-it (None).
    """
    inner = [lines[start][width:]]
    lazy: list[int] = []
    j, blank = start + 1, 0  # blank: blank lines since the item's last line
    while j < len(lines):
        line = lines[j]
        rest = line.lstrip(" ")
        if not rest:
            blank += 1
        elif rest[0] == "\t":
            return None
        elif len(line) - len(rest) >= width:
            inner.extend([""] * blank)
            inner.append(line[width:])
            blank = 0
        elif blank == 0 and item_marker(rest) is None and goes_on(rest):
            lazy.append(len(inner))
            inner.append(rest)  # markdown-it's getLines takes all of a lazy line's indentation off
        else:
            break
        j += 1
    return ItemLines(inner, lazy, j, blank > 0)


def continues(blocks: list[SimpleBlock], paragraphs: set[int], line: int) -> bool:
    """Whether `line` of a scanned quote or item lies inside a paragraph (one of `paragraphs`,
    by first line) that began above it: a lazy line must go on with one."""
    block = next((b for b in blocks if b.start_line <= line < b.end_line), None)
    return block is not None and block.start_line < line and block.start_line in paragraphs


def after_blank(lines: list[str], start: int) -> tuple[int, str | None] | None:
    """Past the blank lines from `start` after a list's one-line item: the next line and the marker of
    the item it begins (None: no item, or the note's end), or None when that line is more of the
    last item (indented) or a sibling whose text is further in (`-  x`: the scanner's `_block_list`)."""
    j = start
    while j < len(lines) and not lines[j].strip(" "):
        j += 1
    if j == len(lines):
        return j, None
    following = item_marker(lines[j])
    if lines[j][0] in " \t" or (following is None and spaced_item(lines[j]) is not None):
        return None
    return j, following


def lazy_end(blocks: list[SimpleBlock], paragraphs: set[int], lazy: list[int], size: int) -> int | None:
    """Where a scanned quote's `size` lines end in markdown-it: at the first lazy line that goes on
    with no paragraph but begins a block of its own (its tokenize stops at such a line), else at
    the end; None when a lazy line lies inside another block (a list, a table: left to markdown-it)."""
    for line in lazy:
        if not continues(blocks, paragraphs, line):
            return line if any(block.start_line == line for block in blocks) else None
    return size


def quote_end_known(inner: list[str], before_text: bool) -> bool:
    """Whether a quote whose lines (less their `>`) are `inner` ends where its last line does in
    markdown-it's map, as the scanner has it.

    After its last block markdown-it steps over one empty line and then skips empty lines up to
    the next line with text, past the quote's own end when the note goes on blank there: a quote
    ending in two empty `>` lines (or holding nothing but empty ones) followed by a blank line has
    a longer map. Right before a line with text (`before_text`) it stops at that line.
    """
    empty = 0
    while empty < len(inner) and not inner[-1 - empty].strip(" "):
        empty += 1
    return empty == 0 or (empty == 1 and len(inner) > 1) or before_text
