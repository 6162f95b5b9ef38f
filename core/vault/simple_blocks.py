"""The top-level blocks of a plainly written note, without markdown-it's block pass.

Most notes are written in a handful of shapes: ATX headings, paragraphs, one-line
`- ` items and `> ` quotes set apart by blank lines (every tldr page is exactly that).
For such a note the CommonMark blocks follow from each line's first characters, and
finding them here is ~10x cheaper than markdown-it's block pass, which tries a dozen
rules at every line and was the largest cost of parsing a note.

`simple_blocks` accepts a note only when every line is one of those shapes in an
arrangement where CommonMark leaves no choice (no lazy continuation, no indentation,
no construct that could begin a fence, table, HTML block, reference definition,
setext heading, rule or ordered list); anything else returns None and the chunker
parses with markdown-it as before. The line numbers and inline texts it returns are
exactly those markdown-it's tokens carry: a test compares the two on every note of
the real vaults and on generated notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What can begin a paragraph line (in a block's first column) and nothing else. Left out:
# space (indented code, lazy lines), ">" (quote), "-" "=" "|" ":" (lists, rules, setext
# underlines, table delimiter rows), "<" (HTML blocks); "`" and "~" begin fences only three
# at a time; "*" "+" "_" and digits are let in below unless they make a list or a rule; "#"
# unless it makes a heading; "[" unless a reference definition ("]:") is anywhere.
_PLAIN_FIRST = re.compile(r"[^\s>\-=|:<`~]|`(?!``)|~(?!~~)")
_LIST_OR_RULE = re.compile(r"[*+](?: |\Z)|\d{1,9}[.)](?: |\Z)|(?:\*[ ]*){3,}\Z|(?:_[ ]*){3,}\Z")
_HEADING = re.compile(r"(#{1,6})(?: (.*))?\Z")
_NOT_SIMPLE = re.compile(r"[\t\r\x00\x0b\x0c\x1c-\x1f\x85\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
_MD_TRIM = " \n"  # markdown-it trims inline text by CommonMark's whitespace: only these two are let in


@dataclass(frozen=True, slots=True)
class SimpleBlock:
    """A top-level block as line numbers (markdown-it's `map`), its heading level and text."""

    start_line: int
    end_line: int
    heading_level: int  # 0 for a paragraph, quote or list
    heading_text: str


def simple_blocks(text: str) -> tuple[list[SimpleBlock], list[str]] | None:
    """The top-level blocks and the inline texts (in order) of a plainly written note, or None.

    Args:
        text: The note's body, decoded.

    Returns:
        (blocks, inline_texts) where the inline texts are the `content` of every inline
        token markdown-it would make, in document order (where tags are read from); None
        when the note is not in the simple shapes and markdown-it must parse it.
    """
    if _NOT_SIMPLE.search(text) is not None:
        return None  # tabs, carriage returns, unusual whitespace: markdown-it knows them best
    lines = text.split("\n")
    if text.endswith("\n") or not lines[-1].strip(" "):
        # markdown-it's lines: none after the last line break, nor a last line of only spaces
        lines.pop()
    refs = "]:" in text
    n = len(lines)
    blocks: list[SimpleBlock] = []
    inline: list[str] = []
    i = 0
    while i < n:
        line = lines[i]
        if not line.strip(" "):
            i += 1
            continue
        first = line[0]
        if first == "#":
            m = _HEADING.match(line)
            if m is not None:
                level = len(m.group(1))
                content = _heading_content(m.group(2))
                blocks.append(SimpleBlock(i, i + 1, level, content))
                inline.append(content)
                i += 1
                continue
        if first in ">-":
            j = i
            marker = first + " "
            while j < n and lines[j].startswith(marker) and _plain(lines[j][2:], refs):
                inline.append(lines[j][2:].strip(_MD_TRIM))
                if first == "-":  # one-line items, each followed by a blank line or the end
                    if j + 1 < n and lines[j + 1].strip(" "):
                        return None
                    j += 1
                    while j < n and not lines[j].strip(" "):
                        j += 1
                else:
                    j += 1
            if j == i:
                return None
            if first == ">":
                if j < n and lines[j].strip(" "):
                    return None  # a lazy continuation line, or a block right after the quote
                # One paragraph: markdown-it gives it one inline token of all the lines.
                content = "\n".join(lines[k][2:] for k in range(i, j)).strip(_MD_TRIM)
                del inline[len(inline) - (j - i) :]
                inline.append(content)
            blocks.append(SimpleBlock(i, j, 0, ""))
            i = j
            continue
        j = i
        while j < n and lines[j].strip(" ") and _plain(lines[j], refs) and not _is_heading(lines[j]):
            j += 1
        if j == i:
            return None
        if j < n and lines[j].strip(" ") and not _is_heading(lines[j]):
            return None  # something other than a blank line or a heading interrupts the paragraph
        blocks.append(SimpleBlock(i, j, 0, ""))
        inline.append("\n".join(lines[i:j]).strip(_MD_TRIM))
        i = j
    return blocks, inline


def _plain(line: str, refs: bool) -> bool:
    """Whether `line` (at a block's first column) can only be paragraph text."""
    if not line or _PLAIN_FIRST.match(line) is None:
        return False
    first = line[0]
    if first in "*+_0123456789" and _LIST_OR_RULE.match(line) is not None:
        return False
    if first == "[" and refs:
        return False
    return not (first == "#" and _HEADING.match(line) is not None)


def _is_heading(line: str) -> bool:
    return line.startswith("#") and _HEADING.match(line) is not None


def _heading_content(rest: str | None) -> str:
    """markdown-it's heading text: trailing spaces, then a closing run of #s after a space, cut."""
    src = "" if rest is None else " " + rest  # from just after the #s, as markdown-it reads it
    end = len(src.rstrip(" "))
    tmp = end
    while tmp > 0 and src[tmp - 1] == "#":
        tmp -= 1
    if 0 < tmp < end and src[tmp - 1] == " ":
        end = tmp
    return src[:end].strip(_MD_TRIM)
