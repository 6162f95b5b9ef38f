"""The top-level blocks of a plainly written note, without markdown-it's block pass.

Most notes are written in a handful of shapes: ATX headings, paragraphs, `- ` items and `> `
quotes set apart by blank lines (every tldr page is exactly that); a book's chapters add items
running over several lines and one-line link reference definitions (`[label]: url`, read by
markdown-it itself for the inline pass). For such a note the CommonMark blocks follow from each
line's first characters, and finding them here is ~10x cheaper than markdown-it's block pass,
which tries a dozen rules at every line and was the largest cost of parsing a note.

Obsidian notes add callouts, tables, HTML comments, footnotes (`[^1]: text`, which CommonMark
reads as a paragraph), `==highlights==` and `:emoji:` codes at a line's start, and text indented
by a space or two; the scanner reads those too.

`simple_blocks` accepts a note only when every line is one of those shapes in an arrangement
where CommonMark leaves no choice (a construct that could begin a setext heading, a table or a
reference definition where the scanner cannot tell, a list item holding more than text, or a
tab where columns matter, is declined); anything else returns None and the chunker parses with
markdown-it as before. The line numbers and inline texts it returns are exactly those
markdown-it's tokens carry: a test compares the two on every real vault's note and generated ones.
"""

from __future__ import annotations

import re

from core.vault.simple_html_tables import html_end, html_kind, interrupts_paragraph, table_header, table_rows
from core.vault.simple_html_tables import table_interrupts as _table_interrupts
from core.vault.simple_items import after_blank, continues, item_lines, lazy_end, quote_end_known
from core.vault.simple_lines import FENCE_OPEN, HEADING, ends_paragraph, ends_table, is_ref_def, plain_text, spaced_item
from core.vault.simple_lines import LETTER as _LETTER
from core.vault.simple_lines import code_end as _code_end
from core.vault.simple_lines import dash_text as _dash_text
from core.vault.simple_lines import fence_end as _fence_end
from core.vault.simple_lines import heading_content as _heading_content
from core.vault.simple_lines import indent as _indent
from core.vault.simple_lines import item_marker as _item
from core.vault.simple_lines import maybe_reference as _maybe_reference
from core.vault.simple_lines import nest as _nest
from core.vault.simple_lines import odd_between_words as _odd_between_words
from core.vault.simple_note import InlineText, SimpleBlock, SimpleNote

_RULE = re.compile(r"(?:-[ \t]*){3,}\Z|(?:\*[ \t]*){3,}\Z|(?:_[ \t]*){3,}\Z")
_NEWLINES = re.compile(r"\r\n?")
_ORDERED = re.compile(r"(\d{1,9})[.)](?= |\Z)")
_NOT_SIMPLE = re.compile(r"[\t\r\x00\x0b\x0c\x1c-\x1f\x85\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
_MD_TRIM = " \n"  # markdown-it trims inline text by CommonMark's whitespace: only these two are let in


def simple_blocks(text: str) -> SimpleNote | None:
    """The top-level blocks and the inline texts (in order) of a plainly written note, or None.

    Args:
        text: The note's body, decoded.

    Returns:
        (blocks, inline_texts, references) where the inline texts are the `content` and first line of
        every inline token markdown-it would make, in document order (tags and links are
        read from them); None when the note is not in the simple shapes and markdown-it
        must parse it. `references` are the note's link reference definition lines (they
        make no block; `[text][label]` in the inline texts needs them to be a link).
    """
    if "\r" in text:  # markdown-it's own normalising: CRLF (Windows) and a lone CR are line breaks
        text = _NEWLINES.sub("\n", text)
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    lines = text.split("\n")
    if text.endswith("\n") or not lines[-1].strip(" \t"):
        # markdown-it's lines: none after the last line break, nor a last line of only spaces
        lines.pop()
    scan = _Scan(lines, strict=_NOT_SIMPLE.search(text) is not None, refs=_maybe_reference(text), top=True)
    return None if scan.run() is None else SimpleNote(scan.blocks, scan.inline, scan.references)


class _Scan:
    """One pass over a note's lines; each `_block` method returns where its block ends, or None."""

    def __init__(self, lines: list[str], *, strict: bool, refs: bool, top: bool = False, item: bool = False) -> None:
        self.lines = lines
        self.strict = strict  # tabs or unusual whitespace somewhere: allowed only in code
        self.refs = refs  # a reference definition may exist: "[" cannot begin plain text
        self.top = top  # the note itself, not a quote's inside: the only place definitions are read
        # An item's lines, less its indentation: a quote's lazy line would keep all of it in markdown-it.
        self.item = item
        self.references: list[str] = []
        self.blocks: list[SimpleBlock] = []
        self.inline: list[InlineText] = []
        self.paragraphs: set[int] = set()  # first lines of the paragraphs found (lazy lines must continue one)

    def run(self) -> tuple[list[SimpleBlock], list[InlineText]] | None:
        lines, n, i = self.lines, len(self.lines), 0
        while i < n:
            line = lines[i]
            if not line.strip(" \t"):
                i += 1
                continue
            end = self._block(i, line)
            if end is None:
                return None
            i = end
        return self.blocks, self.inline

    def _block(self, i: int, line: str) -> int | None:
        """The block at line `i` (not blank), in markdown-it's order of rules; where it ends."""
        first = line[0]
        if first not in " \t" and "|" in line and (header := table_header(self.lines, i)) is not None:
            return self._table(i, header)
        if first in " \t":
            return self._indented(i, line)
        if first in "`~" and FENCE_OPEN.match(line):
            return self._fence(i)
        if first == "#" and HEADING.match(line) and not self._odd(line):
            return self._heading(i)
        if first == ">":
            return self._quote(i)
        if first in "-*_" and _RULE.match(line) and not self._odd(line):
            self.blocks.append(SimpleBlock(i, i + 1, 0, ""))  # a thematic break (`---`), after a blank line
            return i + 1
        if (marker := _item(line)) is not None:
            return self._list(i, marker)
        if first in "-*+0123456789" and spaced_item(line) is not None:
            return self._block_list(i, 0)  # `1.  Step`: its text 2 to 4 spaces after the marker
        if first == "[" and self.refs and self.top and is_ref_def(line):
            return self._reference(i)
        if first == "<" and (kind := html_kind(line)) is not None:
            if self._odd(line):
                return None
            end = html_end(self.lines, i, kind)
            self.blocks.append(SimpleBlock(i, end, 0, ""))
            return end
        return self._paragraph(i)

    def _indented(self, i: int, line: str) -> int | None:
        """Code 4 columns in; 1 to 3 spaces in, a fence, quote, list or paragraph (a tab: left to markdown-it)."""
        if _indent(line) >= 4:
            return self._code(i)
        rest = line.lstrip(" ")
        if rest[0] == "\t" or _RULE.match(rest):
            return None
        if rest[0] in "`~" and FENCE_OPEN.match(rest):
            return self._fence(i)
        if rest[0] == ">":
            return self._quote(i)
        if spaced_item(rest) is not None:
            return self._block_list(i, len(line) - len(rest))
        return self._paragraph(i)

    def _fence(self, i: int) -> int | None:
        end = _fence_end(self.lines, i)
        if end is not None:
            self.blocks.append(SimpleBlock(i, end, 0, ""))
        return end

    def _odd(self, line: str) -> bool:
        return self.strict and _NOT_SIMPLE.search(line) is not None

    def _odd_text(self, line: str) -> bool:
        """`_odd` for a line read as paragraph text: unusual whitespace between its words is let in."""
        return self._odd(line) and not _odd_between_words(line, _NOT_SIMPLE)

    def _text(self, line: str, *, inside: bool = False) -> bool:
        """Whether `line`, at a block's first column, can only be paragraph text.

        `inside` a paragraph (a line after its first) more is text: a reference definition
        cannot interrupt a paragraph, so "[" is text even in a note that defines references.
        A "-" line that makes no list item, rule, setext underline or table row (`--release`,
        a comment's closing `-->`, `----- %%`) is text anywhere.
        """
        if line.startswith("-"):
            return _dash_text(line) and not (self.strict and self._odd_text(line))
        return plain_text(line, self.refs and not inside) and not (self.strict and self._odd_text(line))

    def _reference(self, i: int) -> int | None:
        """A one-line link reference definition: no block; the next line must end it plainly."""
        lines = self.lines
        if i + 1 < len(lines) and lines[i + 1].strip(" \t") and not is_ref_def(lines[i + 1]):
            return None  # a title on the next line, or a paragraph right after: left to markdown-it
        self.references.append(lines[i])
        return i + 1

    def _heading(self, i: int) -> int:
        m = HEADING.match(self.lines[i])
        assert m is not None
        content = _heading_content(m.group(2))
        self.blocks.append(SimpleBlock(i, i + 1, len(m.group(1)), content))
        self.inline.append(InlineText(content, i))
        return i + 1

    def _paragraph(self, i: int) -> int | None:
        """A paragraph: a first line of text (up to 3 spaces in) and the lines that go on with it."""
        lines, n = self.lines, len(self.lines)
        first = lines[i].lstrip(" ")
        if len(lines[i]) - len(first) > 3 or not (self._text(first) or self._html_text(first, first=True)):
            return None
        j = i + 1
        plain = not self.strict  # no odd whitespace in the note: a line starting with a letter goes on (`_goes_on`)
        while j < n and ((plain and lines[j][:1] in _LETTER) or self._goes_on(lines[j])):
            j += 1
        if j < n and lines[j].strip(" ") and not (ends_paragraph(lines[j]) or _table_interrupts(lines, j)):
            return None  # only a blank line, a quote, heading, fence, list, table or HTML block may end a paragraph here
        self.blocks.append(SimpleBlock(i, j, 0, ""))
        self.paragraphs.add(i)
        self.inline.append(InlineText("\n".join(lines[i:j]).strip(_MD_TRIM), i))
        return j

    def _goes_on(self, line: str) -> bool:
        """Whether `line` continues a paragraph: text, up to 3 spaces in, that begins no block that may
        interrupt one; 4 or more spaces in, anything (markdown-it's "lazy" code is the paragraph's)."""
        if line[:1] in _LETTER:  # most lines of prose: `plain_text` would say yes
            return not (self.strict and self._odd_text(line))
        rest = line.lstrip(" ")
        if not rest:
            return False
        if len(line) - len(rest) > 3:
            return not self._odd_text(rest)
        return self._text(rest, inside=True) or self._html_text(rest, first=False) or self._numbered(rest)

    def _numbered(self, line: str) -> bool:
        """Whether a line like `38.` or `2. x` goes on a paragraph (not an item's) as text: an ordered
        list interrupts a paragraph only when it starts at 1 and has content."""
        m = _ORDERED.match(line)
        return m is not None and (int(m.group(1)) != 1 or not line[m.end() :].strip(" ")) and not self._odd(line)

    def _html_text(self, line: str, *, first: bool) -> bool:
        """Whether a line starting with `<` is paragraph text: it begins no HTML block there."""
        if not line.startswith("<") or self._odd(line):
            return False
        return html_kind(line) is None if first else not interrupts_paragraph(line)

    def _quote(self, i: int) -> int | None:
        """A quote (an Obsidian callout too): its lines scanned as a note of their own.

        It runs over `>` lines and lazy lines (plain text going on with a paragraph of the quote, as
        in `> [!note]` above an unmarked line) up to a blank line or a line after an empty `>` line;
        a lazy line that begins a block of its own ends it there (`lazy_end`)."""
        lines, n, j = self.lines, len(self.lines), i
        inner: list[str] = []
        lazy: list[int] = []
        while j < n and lines[j].strip(" "):
            line = lines[j]
            if line.startswith(">") or (line.lstrip(" ").startswith(">") and _indent(line) < 4):
                rest = line.lstrip(" ")[1:]
                rest = rest[1:] if rest.startswith(" ") else rest
                if rest.startswith("\t"):
                    return None  # markdown-it counts a tab after `>` by columns: left to it
                inner.append(rest)
            elif not inner[-1].strip(" "):
                break  # a line after an empty `>` line: the quote ends before it
            elif self._lazy(line) and not self.item:
                lazy.append(j - i)
                inner.append(line)
            elif ends_paragraph(line):
                break  # a block that ends the quote
            else:
                return None
            j += 1
        if not quote_end_known(inner, j < n and bool(lines[j].strip(" \t"))):
            return None
        scan = _Scan(inner, strict=self.strict, refs=self.refs)
        end = None if scan.run() is None else lazy_end(scan.blocks, scan.paragraphs, lazy, len(inner))
        if end is None:
            return None
        j = i + end
        self.inline.extend(InlineText(t.content, t.line + i) for t in scan.inline if t.line + i < j)
        self.blocks.append(SimpleBlock(i, j, 0, ""))
        return j

    def _lazy(self, line: str) -> bool:
        """Whether a line without `>` goes on with a quote's open paragraph: text that begins no
        block a quote gives way to (markdown-it ends a quote at any list item, even `2.`)."""
        rest = line.lstrip(" ")
        return self._text(rest, inside=True) or self._html_text(rest, first=False)

    def _table(self, i: int, header: list[str]) -> int | None:
        """A GFM table: one inline text per cell, header first, then each row's."""
        found = table_rows(self.lines, i, len(header), self._row, ends_table)  # a heading, quote, fence or HTML block ends it
        if found is None or self._odd(self.lines[i]) or self._odd(self.lines[i + 1]):
            return None
        end, rows = found
        self.inline.extend(InlineText(cell.strip(_MD_TRIM), i) for cell in header)
        self.inline.extend(InlineText(cell, line) for line, row in rows for cell in row)
        self.blocks.append(SimpleBlock(i, end, 0, ""))
        return end

    def _row(self, line: str) -> bool:
        return (line.startswith("|") or self._text(line)) and not self._odd(line)

    def _list(self, i: int, marker: str) -> int | None:
        """A list: items of text (`_text_list`), else items holding blocks (`_block_list`)."""
        blocks, inline = len(self.blocks), len(self.inline)
        end = self._text_list(i, marker)
        if end is None:
            del self.blocks[blocks:], self.inline[inline:]
            end = self._block_list(i, 0)
        return end

    def _block_list(self, i: int, lead: int) -> int | None:
        """Items whose lines (indented by spaces) are scanned as notes of their own: steps holding
        a fence, an image after a blank line, a nested list. Its first marker is `lead` spaces in,
        the others up to 3; each item's text column (1 to 4 spaces after its marker) decides which
        lines are its. The end line, or None."""
        lines, n, j = self.lines, len(self.lines), i
        found = spaced_item(lines[i][lead:])
        assert found is not None
        marker, spaces = found
        kind = marker[-1]
        while True:
            item = item_lines(lines, j, lead + len(marker) + spaces, self._lazy)
            if item is None:
                return None
            scan = _Scan(item.inner, strict=self.strict, refs=self.refs, item=True)
            if scan.run() is None or not all(continues(scan.blocks, scan.paragraphs, k) for k in item.lazy):
                return None
            self.inline.extend(InlineText(t.content, t.line + j) for t in scan.inline)
            end = item.end
            if end >= n:
                break
            rest = lines[end].lstrip(" ")
            following = spaced_item(rest) if len(lines[end]) - len(rest) < 4 else None
            if following is not None and following[0][-1] == kind:
                (marker, spaces), j, lead = following, end, len(lines[end]) - len(rest)
                continue
            if not (item.apart or ends_paragraph(lines[end])):
                return None  # right under the item: only a block that interrupts its text ends it
            break
        self.blocks.append(SimpleBlock(i, end, 0, ""))
        return end

    def _text_list(self, i: int, marker: str) -> int | None:
        """Items of one line each, tight or apart, nested by spaces or tabs; the list's end line.

        A nested item's marker sits under its parent's text or up to 3 columns further (a
        child; an ordered one numbered 1, as only those interrupt the parent's paragraph), or
        exactly under an open nested item's marker (its sibling); a tab reaches the next
        multiple of 4 columns, as in markdown-it. Anything else indented is left to it.
        """
        lines, n, j = self.lines, len(self.lines), i
        kind = marker[-1]  # "-", "*", "+", "." or ")": another kind ends the list
        levels = [(0, len(marker) + 1)]  # (marker column, text column) of the open items
        lead = 0  # the current item's leading spaces and tabs
        while True:
            content = lines[j][lead + len(marker) + 1 :]
            if not (self._text(content) or self._html_text(content, first=True)):
                return None
            first, j = j, self._continued(j + 1)
            if j > first + 1:  # markdown-it's getLines: each line loses up to the item's text column of spaces
                content = "\n".join([content, *(line[min(_indent(line), levels[-1][1]) :] for line in lines[first + 1 : j])])
            self.inline.append(InlineText(content.strip(_MD_TRIM), first))
            if j < n and lines[j].strip(" "):  # straight on: another item, or a lazy line
                lead = len(lines[j]) - len(lines[j].lstrip(" \t"))
                following = _item(lines[j][lead:])
                if following is None:
                    if lead or not ends_paragraph(lines[j]):
                        return None
                    break  # a quote, heading, fence or HTML block in the first column ends the list
                if lead:
                    nested = _nest(levels, _indent(lines[j]), following)
                    if nested is None:
                        return None
                    levels, marker = nested, following
                    continue
            else:
                after = after_blank(lines, j)
                if after is None:
                    return None
                j, following = after
            if following is None or following[-1] != kind:
                break  # another kind of list (or none) begins here
            marker, lead, levels = following, 0, [(0, len(following) + 1)]
        self.blocks.append(SimpleBlock(i, j, 0, ""))
        return j

    def _continued(self, j: int) -> int:
        """Past the lines from `j` that continue an item's one-paragraph text.

        A line indented by spaces (or lazily not at all) whose text can only be paragraph text and is
        no list marker continues it, as markdown-it's paragraph rule reads it: only a fence, quote, rule,
        list, HTML block, heading or table ends a paragraph, none of them plain text. Tabs: markdown-it's.
        """
        lines, n = self.lines, len(self.lines)
        while j < n:
            line = lines[j]
            rest = line.lstrip(" ")
            if rest[:1] in _LETTER:  # text, as `_text` says, unless odd: no list marker starts with a letter
                if self.strict and self._odd_text(rest):
                    return j
            elif not rest or rest[0] == "\t" or _item(rest) is not None:
                return j
            elif not (self._text(rest, inside=True) or self._html_text(rest, first=False)):
                return j
            j += 1
        return j

    def _code(self, i: int) -> int | None:
        """An indented code block (4 columns in; 1 to 3: a paragraph, or left to markdown-it)."""
        if _indent(self.lines[i]) < 4:
            return self._paragraph(i)
        end = _code_end(self.lines, i)
        self.blocks.append(SimpleBlock(i, end, 0, ""))
        return end
