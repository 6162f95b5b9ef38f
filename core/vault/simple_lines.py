"""Line shapes of the plain-note scanner: paragraph text, list markers, nesting, link reference definitions.

Split from `core.vault.simple_blocks` (which keeps the block logic). Each helper answers
for one line exactly as markdown-it's block rules would, or declines when unsure.
"""

from __future__ import annotations

import re

from core.vault.simple_html_tables import interrupts_paragraph

# What can begin a paragraph line (in a block's first column) and nothing else. Left out:
# space (indented code, lazy lines), ">" (quote), "-" "=" "|" ":" (lists, rules, setext
# underlines, table delimiter rows; "=" and ":" are let in below when they make neither), "<" (HTML blocks); "`" and "~" begin fences only three
# at a time; "*" "+" "_" and digits are let in below unless they make a list or a rule; "#"
# unless it makes a heading; "[" unless a reference definition ("]:") is anywhere and the
# line may begin one (`simple_lines.no_ref_def`; within a paragraph "[" is always text).
_PLAIN_FIRST = re.compile(r"[^\s>\-=|:<`~]|`(?!``)|~(?!~~)")
_LIST_OR_RULE = re.compile(r"[*+](?: |\Z)|\d{1,9}[.)](?: |\Z)|(?:\*[ ]*){3,}\Z|(?:_[ ]*){3,}\Z")
# A line starting with "=" or ":" is text unless a paragraph's line before it could make it a setext
# underline (`===`) or a table's delimiter row (`:--|--:`): Obsidian's `==highlight==`, `:emoji:`.
_UNDERLINE_OR_DELIMITER = re.compile(r"=+[ \t]*\Z|[-|: \t]*\Z")
LETTER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")  # `plain_text` says yes to a line starting so
HEADING = re.compile(r"(#{1,6})(?: (.*))?\Z")
FENCE_OPEN = re.compile(r"(`{3,}|~{3,})(.*)\Z", re.DOTALL)  # at the first column only
_ITEM = re.compile(r"([-*+]|\d{1,9}[.)]) (?! )")
_SPACED_ITEM = re.compile(r"([-*+]|\d{1,9}[.)])( {1,4})(?! )")
# A link reference definition on one line, in the narrowest shape (`[label]: destination`):
# no brackets or backslashes in the label, no angle brackets, parentheses, backslashes or
# controls in the destination, no title. markdown-it drops a definition whose destination
# fails its `validateLink` (`_BAD_PROTOCOL`), so such a line is left to it.
_REF_DEF = re.compile(r"\[([^\[\]\\\x00-\x1f]{1,999})\]:[ ]*[^\x00-\x20\x7f<()\\][^\x00-\x20\x7f()\\]*[ ]*\Z")
_LABEL_END = re.compile(r"[\[\]\\]")
# After a label's `]:`, a destination (no angle brackets, parentheses or backslashes) with text
# after it on the line that no title can start: markdown-it reads no definition there. Obsidian's
# footnotes (`[^1]: Some text.`) are this shape; `[^1]: "title"` or `[^1]: url` alone are not.
_TEXT_AFTER_DESTINATION = re.compile(r"[ \t]*[^ \x00-\x1f\x7f()\\<][^ \x00-\x1f\x7f()\\]*[ \t]+[^ \t\"'(]")
_BAD_PROTOCOL = re.compile(r"\[[^\]]*\]:[ ]*(?:vbscript|javascript|file|data):", re.IGNORECASE)


def odd_between_words(line: str, odd: re.Pattern[str]) -> bool:
    """Whether the unusual whitespace in `line` (a tab, a no-break space ...: `odd` finds it) sits only
    between words of text, where markdown-it keeps it in the inline text as it is: after a letter
    (or any non-ASCII character that `odd` does not name), so it is no indentation and ends no
    block marker (`#\tx`, `-\tx`, `1.\tx`), and before the line's last character but spaces,
    so no trimming (Python's `strip`, which markdown-it uses) takes it."""
    first = odd.search(line)
    if first is None:
        return True
    if not any(ch.isalpha() or ch > "\x7f" for ch in line[: first.start()]):
        return False
    last = line.rstrip(" ")[-1:]
    return odd.match(last) is None


def item_marker(line: str) -> str | None:
    """The list marker `line` starts with (followed by one space and more), else None."""
    m = _ITEM.match(line)
    return m.group(1) if m is not None and len(line) > m.end() else None


def spaced_item(line: str) -> tuple[str, int] | None:
    """The list marker `line` starts with and the spaces after it (1 to 4: markdown-it's text
    column; 5 or more begin indented code) when text follows, else None."""
    m = _SPACED_ITEM.match(line)
    return (m.group(1), len(m.group(2))) if m is not None and len(line) > m.end() else None


def indent(line: str) -> int:
    """Leading whitespace as markdown-it counts it (a tab to the next multiple of 4)."""
    offset = 0
    for ch in line:
        if ch == " ":
            offset += 1
        elif ch == "\t":
            offset += 4 - offset % 4
        else:
            break
    return offset


def code_end(lines: list[str], start: int) -> int:
    """The line after an indented code block starting at `start`: after its last non-blank line
    indented 4 columns or more (blank lines between stay in it), as markdown-it ends it."""
    j = last = start + 1
    while j < len(lines):
        if lines[j].strip(" \t"):
            if indent(lines[j]) < 4:
                break
            last = j + 1
        j += 1
    return last


def nest(levels: list[tuple[int, int]], depth: int, marker: str) -> list[tuple[int, int]] | None:
    """The open items after an item marked `marker` at column `depth` (> 0), or None if unsure."""
    item = (depth, depth + len(marker) + 1)
    if levels[-1][1] <= depth <= levels[-1][1] + 3:  # under the last item's text: its first child
        if marker[-1] in ".)" and int(marker[:-1]) != 1:
            return None  # not a list: more of the parent's paragraph
        return [*levels, item]
    for k in range(1, len(levels)):
        if levels[k][0] == depth:  # under a nested item's marker: its sibling (or a new list there)
            return [*levels[:k], item]
    return None


def is_ref_def(line: str) -> bool:
    """Whether `line` (at a note's first column, outside any paragraph) is a one-line link
    reference definition markdown-it keeps (its label has more than spaces)."""
    m = _REF_DEF.match(line)
    return m is not None and bool(m.group(1).strip(" ")) and _BAD_PROTOCOL.match(line) is None


def no_ref_def(line: str) -> bool:
    """Whether `line` (starting with "[") surely begins no reference definition: markdown-it's
    `reference` rule fails at a "[" inside the label, at a "]" on this line not followed by ":",
    or at text after the destination that begins no title (a backslash, no "]" on the line, or
    anything else after the colon is left undecided)."""
    m = _LABEL_END.search(line, 1)
    if m is None or m.group() == "\\":
        return False
    if m.group() == "[" or not line.startswith(":", m.end()):
        return True
    return _TEXT_AFTER_DESTINATION.match(line, m.end() + 1) is not None


def fence_end(lines: list[str], start: int) -> int | None:
    """The line after the fence opened at `start` (markdown-it's `map` end), or None if it is no fence."""
    opening = FENCE_OPEN.match(lines[start].lstrip(" "))  # up to 3 spaces in
    assert opening is not None
    marker, info = opening.groups()
    if marker[0] == "`" and "`" in info:
        return None  # not a fence but a paragraph starting with code
    char = marker[0]
    for j in range(start + 1, len(lines)):
        line = lines[j]
        lead = len(line) - len(line.lstrip(" "))
        if lead > 3 or line[lead : lead + 1] != char:
            continue  # indented 4+ (a tab counts as 4) or not the fence's character
        rest = line[lead:].lstrip(char)
        if len(line) - lead - len(rest) >= len(marker) and not rest.strip(" \t"):
            return j + 1
    return len(lines)  # an unclosed fence runs to the end of the note


def heading_content(rest: str | None) -> str:
    """markdown-it's heading text: trailing spaces, then a closing run of #s after a space, cut."""
    src = "" if rest is None else " " + rest  # from just after the #s, as markdown-it reads it
    end = len(src.rstrip(" "))
    tmp = end
    while tmp > 0 and src[tmp - 1] == "#":
        tmp -= 1
    if 0 < tmp < end and src[tmp - 1] == " ":
        end = tmp
    return src[:end].strip(" \n")


def dash_text(line: str) -> bool:
    """Whether a line starting with "-" continues a paragraph as text: no "- " (an item, of any
    spacing), not only dashes, colons and spaces (a rule, a setext underline or a table's
    delimiter row), no "|" (a delimiter row too)."""
    return not line.startswith("- ") and line != "-" and "|" not in line and bool(line.strip("-: "))


def plain_text(line: str, refs: bool) -> bool:
    """Whether `line` (at a block's first column) can only be paragraph text."""
    if not line:
        return False
    first = line[0]
    if first in "=:":
        return _UNDERLINE_OR_DELIMITER.match(line) is None
    if _PLAIN_FIRST.match(line) is None:
        return False
    if first in "*+_0123456789" and _LIST_OR_RULE.match(line) is not None:
        return False
    if first == "[" and refs and not no_ref_def(line):
        return False
    return not (first == "#" and HEADING.match(line) is not None)


def ends_paragraph(line: str) -> bool:
    """Whether `line` (not blank, not paragraph text) ends a paragraph and begins a block the scanner
    knows: a quote, heading, fence, HTML block or list, up to 3 spaces in."""
    rest = line.lstrip(" ")
    if len(line) - len(rest) > 3:
        return False
    line = rest
    if line.startswith(">") or is_heading(line) or FENCE_OPEN.match(line) is not None or interrupts_paragraph(line):
        return True
    marker = item_marker(line)  # a list may interrupt a paragraph; an ordered one only when it starts at 1
    return marker is not None and (marker in "-*+" or int(marker[:-1]) == 1)


def ends_table(line: str) -> bool:
    """Whether `line` (not blank) ends a table at its first column: a heading, quote, fence or an HTML
    block that may interrupt a paragraph (markdown-it's table stops at its "blockquote" terminators;
    a list or rule line is left to it)."""
    if line[0] == ">" or is_heading(line) or interrupts_paragraph(line):
        return True
    opening = FENCE_OPEN.match(line)
    return opening is not None and not (opening.group(1)[0] == "`" and "`" in opening.group(2))


def is_heading(line: str) -> bool:
    """Whether `line` is an ATX heading (`# Title`, or a lone `#`)."""
    return line.startswith("#") and HEADING.match(line) is not None


def maybe_reference(text: str) -> bool:
    """Whether a reference definition's `]:` is anywhere in `text`: a wikilink followed by a colon
    (`[[note]]:`) is none, unless escaped (`[a\\]]:`). (A `find` loop: a regex with a look-behind
    scanned every character, 15 % of reading an Obsidian-shaped note.)"""
    k = text.find("]:")
    while k != -1:
        if k == 0 or text[k - 1] != "]" or text[k - 2 : k - 1] == "\\":
            return True
        k = text.find("]:", k + 2)
    return False
