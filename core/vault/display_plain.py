"""The tokens of a plainly written chunk without markdown-it, for its display text.

Every `cairn search` is a new process, and each snippet is a chunk's display text
(`core.vault.display_text`): importing markdown-it with its plugins (~100 modules),
building its parser and parsing each chunk cost a cold keyword search ~50 ms of ~350.
Most chunks, Obsidian's included, are written in a few shapes: paragraphs, ATX headings,
`-`/`*`/`+` and `1.` items (nested by spaces, tasks `[ ]`/`[x]`), `>` quotes and callouts,
fenced and indented code, rules, pipe tables, one-line `<!-- comments -->`, footnote definitions,
one-line reference definitions (a paragraph's lines may be indented, unless such a line could start a block); their inline
text is read by `core.vault.display_plain_inline`. For those, this module makes the tokens
markdown-it makes, as far as the display walker reads them (same types, contents and
metas, in the same order), so both paths give the same text by the same code. Anything
else (tabs, other indented blocks, setext headings, lazy lines, other HTML, math blocks, other reference
definitions, ...) declines to markdown-it. A test compares the two on real and generated chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.vault.display_html import HTML_SEQUENCES, READ_KINDS, html_kind, reference_key
from core.vault.display_plain_inline import Footnotes, InlineScan
from core.vault.display_tokens import Decline, PlainToken
from core.vault.obsidian_md import CALLOUT_LINE, Callout, clean_source, matching_close
from core.vault.simple_html_tables import delimiter_columns, split_row
from core.vault.simple_lines import is_ref_def

# markdown-it normalises CR and NUL; a reference definition (`[a]: url`) makes `[a]` elsewhere a link: only
# footnote definitions and one-line reference definitions at a line's start are read (`_FOOTNOTE_DEF`, `is_ref_def`).
_DECLINE = re.compile(r"[\r\x00]|(?<!\])\]:|\\\]\]:")
# Outside a code block's inside: tabs and odd whitespace (markdown-it and str.split disagree on it).
_LINE_DECLINE = re.compile(r"[\t\x0b\x0c\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")
_FOOTNOTE_DEF = re.compile(r"^\[\^([^\]\s]+)\]:", re.MULTILINE)
_FOOTNOTE_LINE = re.compile(r"\[\^([^\]\s]+)\]: (?! )(.+)\Z")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)\Z")
_HEADING = re.compile(r"(#{1,6})(?: (.*))?\Z")
_BULLET = re.compile(r"([-*+]) (?! )(.+)\Z")
_ORDERED = re.compile(r"(\d{1,9})([.)]) (?! )(.+)\Z")
_ANY_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?: |\Z)")  # a list item, maybe empty or spaced out
_ONLY_MARKS = re.compile(r"[-=*_|: ]+\Z")  # rules, setext underlines, table delimiter rows
_RULE = re.compile(r"(?:(?:\*[ ]*){3,}|(?:-[ ]*){3,}|(?:_[ ]*){3,})\Z")  # markdown-it's hr, no indentation
_PARAGRAPH_START = re.compile(r"[A-Za-z0-9(\"'!*_\[`]")  # a line 1-3 spaces in that can only begin a paragraph
_CODE_INDENT = "    "  # four spaces past the container's text: indented code, or a paragraph's text


def plain_tokens(markdown: str) -> list[PlainToken] | None:
    """The tokens display text walks for `markdown` (prepared as `display_text` prepares it), or None."""
    src = clean_source(markdown)
    checked = _FOOTNOTE_DEF.sub("", src)
    if "]:" in checked:  # one-line reference definitions are read as blocks (`_Blocks.definition`)
        checked = "\n".join(line for line in checked.split("\n") if not is_ref_def(line))
    if _DECLINE.search(checked):
        return None
    if src.startswith("-") and "--" in src.partition("\n")[0]:
        return None  # mdit-py-plugins' front matter rule reads line 0 loosely ("- `--x`" can open front matter)
    lines = src.split("\n")
    if not lines[-1].strip(" \t"):
        lines.pop()  # markdown-it has no line for trailing blanks after the last line break
    blocks = _Blocks()
    try:
        blocks.run(lines)
        tokens = blocks.out
        _callouts(tokens)
        notes = Footnotes(blocks.footnotes)
        for tok in tokens:
            if tok.type == "inline":
                tok.children = InlineScan(tok.content, notes, frozenset(blocks.refs)).run()
    except Decline:
        return None
    return notes.tail(tokens)


class _Blocks:
    """Block tokens, one construct per method; a container's lines are parsed again as blocks."""

    def __init__(self) -> None:
        self.out: list[PlainToken] = []
        self.footnotes: set[str] = set()
        self.refs: set[str] = set()  # keys of the link reference definitions read
        self.depth = 0  # containers open: footnote definitions are read at the top only

    def run(self, lines: Sequence[str]) -> None:
        i = 0
        while i < len(lines):
            line = lines[i]
            if _LINE_DECLINE.search(line):
                raise Decline
            if not line.strip(" "):
                i += 1
            elif line.startswith(_CODE_INDENT):
                i = self.code_block(lines, i)
            elif line.startswith(" "):
                i = self.indented_items(lines, i)
            elif _RULE.match(line):  # a thematic break at a block's start (after a paragraph: a heading)
                self.out.append(PlainToken("hr"))
                i += 1
            elif _ONLY_MARKS.match(line):
                raise Decline  # a table's delimiter row, `===` as text
            else:
                i = self.block(lines, i)

    def indented_items(self, lines: Sequence[str], i: int) -> int:
        """A block one to three spaces in: a list (a sub-list written four spaces under `1. `) or a paragraph."""
        if i + 1 < len(lines) and _ONLY_MARKS.match(lines[i + 1]):
            raise Decline  # a table's head, a setext heading
        if _marker(lines[i]) is not None:
            return self.items(lines, i)
        bare = lines[i].lstrip(" ")
        if not _PARAGRAPH_START.match(bare) or bare.startswith(("```", "[^")) or _ONLY_MARKS.match(bare) or _ANY_MARKER.match(bare):
            raise Decline  # another indented block: a fence, a quote, a heading, HTML ...
        return self.paragraph(lines, i)

    def block(self, lines: Sequence[str], i: int) -> int:
        """The block starting at line `i`; the line after it (markdown-it's rules in its order: a table first)."""
        line = lines[i]
        if "|" in line and i + 1 < len(lines) and _ONLY_MARKS.match(lines[i + 1]):
            return self.table(lines, i)
        if (fence := _FENCE.match(line)) is not None:
            return self.fence(lines, i, fence)
        if line.startswith(">"):
            return self.quote(lines, i)
        if (heading := _HEADING.match(line)) is not None:
            return self.heading(heading, i)
        if _marker(line) is not None:
            return self.items(lines, i)
        if (kind := html_kind(line)) is not None:
            return self.html(lines, i, kind)
        if line.startswith("$$"):
            raise Decline  # math
        if line.startswith("[^"):
            return self.footnote(lines, i)
        if line.startswith("[") and is_ref_def(line):
            return self.definition(lines, i)
        return self.paragraph(lines, i)

    def definition(self, lines: Sequence[str], i: int) -> int:
        """A one-line reference definition at the top, alone or among others (shown as nothing)."""
        label = reference_key(lines[i][1 : lines[i].index("]")])
        if self.depth or label.startswith("^") or (i + 1 < len(lines) and lines[i + 1].strip(" ") and not is_ref_def(lines[i + 1])):
            raise Decline  # in a container, a footnote's look-alike, a title or a paragraph under it
        self.refs.add(label)
        return i + 1

    def fence(self, lines: Sequence[str], i: int, m: re.Match[str]) -> int:
        """A fenced code block; unclosed, it runs to the end (markdown-it's rule)."""
        marks = m.group(1)
        if marks[0] == "`" and "`" in m.group(2):
            raise Decline  # an inline code span, not a fence
        close = re.compile(rf"[ ]{{0,3}}{re.escape(marks[0])}{{{len(marks)},}}[ \t]*\Z")
        end = i + 1
        while end < len(lines) and not close.match(lines[end]):
            end += 1
        self.out.append(PlainToken("fence", "".join(line + "\n" for line in lines[i + 1 : end])))
        return end + 1

    def code_block(self, lines: Sequence[str], i: int) -> int:
        """Indented code (markdown-it's `code` rule): lines four spaces in, through blank lines, four spaces off each."""
        end = last = i + 1
        while end < len(lines):
            if lines[end].startswith(_CODE_INDENT):
                end = last = end + 1
            elif not lines[end].strip(" "):
                end += 1
            else:
                break
        code = [line[min(4, len(line) - len(line.lstrip(" "))) :] for line in lines[i:last]]
        self.out.append(PlainToken("code_block", "\n".join(code) + "\n"))
        return last

    def html(self, lines: Sequence[str], i: int, kind: int) -> int:
        """A comment, a block-level tag or a lone tag up to markdown-it's end for its kind (shown by `strip_html`)."""
        if kind not in READ_KINDS:
            raise Decline  # script/pre/style/textarea, processing instructions, declarations, CDATA
        end_pattern = HTML_SEQUENCES[kind][1]
        end = i + 1
        if not end_pattern.search(lines[i]):
            while end < len(lines):
                text = lines[end].lstrip(" \t")
                if end_pattern.search(text):
                    end += 1 if text else 0
                    break
                end += 1
        self.out.append(PlainToken("html_block", "".join(line + "\n" for line in lines[i:end])))
        return end

    def heading(self, m: re.Match[str], i: int) -> int:
        text = (m.group(2) or "").strip(" ")
        if text.endswith("#"):
            raise Decline  # a closing sequence
        self.out += [PlainToken("heading_open"), PlainToken("inline", text), PlainToken("heading_close")]
        return i + 1

    def paragraph(self, lines: Sequence[str], i: int) -> int:
        start = i
        i += 1
        while i < len(lines) and lines[i].strip(" "):
            nxt = lines[i]
            if _LINE_DECLINE.search(nxt):
                raise Decline
            if not nxt.startswith(_CODE_INDENT):  # indented four or more: text, whatever it holds
                bare = nxt.lstrip(" ")
                if _ONLY_MARKS.match(bare):
                    raise Decline  # a setext underline, a rule or a table
                if _interrupts(bare):
                    if bare != nxt and _marker(nxt) is None:
                        raise Decline  # another indented block: a fence, a quote, a heading ...
                    break
            i += 1
        text = "\n".join(lines[start:i]).strip(" \n")
        self.out += [PlainToken("paragraph_open"), PlainToken("inline", text), PlainToken("paragraph_close")]
        return i

    def quote(self, lines: Sequence[str], i: int) -> int:
        """`>` lines, and lazy lines continuing the paragraph the quote ends in (`> [!tip]` then unquoted text)."""
        inner: list[str] = []
        while i < len(lines) and lines[i].strip(" "):
            line = lines[i]
            if line.startswith(" "):
                raise Decline  # markdown-it reads `    > a` as a quote line here, `    a` maybe as a lazy one
            if line.startswith(">"):
                body = line[1:]
                inner.append(body[1:] if body.startswith(" ") else body)
            elif not inner[-1].strip(" ") or not self._lazy(line, inner):
                break  # after an empty quote line a line starts a block of its own
            else:
                inner.append(line)
            i += 1
        self.out.append(PlainToken("blockquote_open"))
        self.nested(inner)
        self.out.append(PlainToken("blockquote_close"))
        return i

    def _lazy(self, line: str, inner: list[str]) -> bool:
        """Whether `line` continues the quote's last paragraph (declined when it could end the quote)."""
        if line.startswith((" ", "<", "$$", "[^")) or _ONLY_MARKS.match(line) or _LINE_DECLINE.search(line):
            raise Decline  # indentation, HTML, math, footnotes, rules: markdown-it's terminators decide
        if _FENCE.match(line) or _HEADING.match(line) or _ANY_MARKER.match(line):
            raise Decline  # a block that ends the quote
        trial = _Blocks()
        trial.depth = self.depth + 1
        trial.run(inner)
        if not trial.out or trial.out[-1].type != "paragraph_close":
            raise Decline  # a lazy line after a heading or a list: markdown-it's quirks decide
        return True

    def nested(self, lines: Sequence[str]) -> None:
        self.depth += 1
        self.run(lines)
        self.depth -= 1

    def items(self, lines: Sequence[str], i: int) -> int:
        """One list: items of one marker kind, each item's lines parsed as blocks of their own."""
        kind, number = _marker(lines[i])[:2]  # type: ignore[index]
        ordered = kind in ".)"
        self.out.append(PlainToken("ordered_list_open" if ordered else "bullet_list_open", start=None if number in (None, 1) else number))
        while i < len(lines):
            found = _marker(lines[i])
            if found is None or found[0] != kind:
                break
            i = self.item(lines, i, found)
            gap = i
            while gap < len(lines) and not lines[gap].strip(" "):
                gap += 1
            after = _marker(lines[gap]) if gap < len(lines) else None
            if after is None or after[0] != kind:
                break
            i = gap
        self.out.append(PlainToken("ordered_list_close" if ordered else "bullet_list_close"))
        return i

    def item(self, lines: Sequence[str], i: int, found: tuple[str, int | None, int, str]) -> int:
        _, _, width, rest = found
        meta: dict[str, Any] = {}
        if len(rest) >= 4 and rest[0] == "[" and rest[2] == "]" and rest[1] in " xX" and rest[3] == " ":
            meta = {"checked": rest[1] != " "}
            rest = rest[4:]
            if not rest.strip(" ") or rest.startswith(" "):
                raise Decline
        body = [rest]
        i += 1
        pad = " " * width
        while i < len(lines):
            line = lines[i]
            if not line.strip(" "):
                nxt = next((ln for ln in lines[i:] if ln.strip(" ")), None)
                if nxt is None or not nxt.startswith(pad):
                    break  # the blank lines end the item
                body.append("")
            elif line.startswith(pad):
                body.append(line[width:])
            elif _marker(line) is None:
                raise Decline  # under-indented, or a lazy line / an interruption after the item's text
            else:
                break  # the next item
            i += 1
        self.out.append(PlainToken("list_item_open", meta=meta))
        self.nested(body)
        self.out.append(PlainToken("list_item_close"))
        return i

    def table(self, lines: Sequence[str], i: int) -> int:
        """A pipe table (markdown-it's rule): a row per line up to a blank line, each row's cells as inline tokens."""
        aligns = delimiter_columns(lines[i + 1])
        head = _cells(lines[i])
        if aligns is None or len(head) != aligns:
            raise Decline
        rows = [head]
        i += 2
        while i < len(lines) and lines[i].strip(" "):
            if not lines[i].startswith("|") or _LINE_DECLINE.search(lines[i]):
                raise Decline  # a row without a leading pipe may be another block
            cells = _cells(lines[i])
            rows.append([cells[c] if c < len(cells) else "" for c in range(aligns)])
            i += 1
        for row in rows:
            self.out += [PlainToken("tr_open"), *(PlainToken("inline", cell) for cell in row), PlainToken("tr_close")]
        return i

    def footnote(self, lines: Sequence[str], i: int) -> int:
        """A one-line footnote definition at the top (moved to the end by `_footnote_tail`)."""
        m = _FOOTNOTE_LINE.match(lines[i])
        if self.depth or m is None or m.group(1) in self.footnotes or not m.group(2)[0].isalnum():
            raise Decline
        if i + 1 < len(lines) and lines[i + 1].strip(" ") and not (lines[i + 1].startswith(">") or _HEADING.match(lines[i + 1])):
            raise Decline  # a lazy line of the definition (a quote or a heading ends it)
        if next((ln for ln in lines[i + 1 :] if ln.strip(" ")), "").startswith(" "):
            raise Decline  # an indented block after blank lines: the definition's own
        self.footnotes.add(m.group(1))
        self.out += [PlainToken("footnote_reference_open", meta={"label": m.group(1)}), PlainToken("paragraph_open")]
        self.out += [PlainToken("inline", m.group(2).strip(" ")), PlainToken("paragraph_close"), PlainToken("footnote_reference_close")]
        return i + 1


def _marker(line: str) -> tuple[str, int | None, int, str] | None:
    """(bullet or ordered delimiter, number, content column, text) of an item line up to three spaces in (a spaced-out one declines)."""
    bare = line.lstrip(" ")
    indent = len(line) - len(bare)
    if indent > 3 or _ONLY_MARKS.match(line) or not _ANY_MARKER.match(bare):
        return None
    m = _BULLET.match(bare)
    if m is not None:
        return m.group(1), None, indent + 2, m.group(2)
    m = _ORDERED.match(bare)
    if m is not None:
        return m.group(2), int(m.group(1)), indent + len(m.group(1)) + 2, m.group(3)
    raise Decline


def _interrupts(line: str) -> bool:
    """Whether `line` ends a paragraph before it (else it continues the paragraph's text)."""
    if line.startswith((">", "<!--", "```", "~~~")) or _HEADING.match(line) or _BULLET.match(line):
        return True
    if _ANY_MARKER.match(line) and not _ORDERED.match(line):
        raise Decline  # an empty or spaced-out item: whether it interrupts is CommonMark's detail
    if line.startswith("<"):
        kind = html_kind(line)
        return kind is not None and HTML_SEQUENCES[kind][2]  # a lone tag does not interrupt: it is inline HTML
    if line.startswith(("$$", "[^")):
        raise Decline  # math or a footnote definition may interrupt
    m = _ORDERED.match(line)
    return m is not None and int(m.group(1)) == 1  # "01." starts at 1 too, as markdown-it reads it


def _cells(line: str) -> list[str]:
    """A row's cells as markdown-it splits them: `\\|` is a pipe inside a cell, outer pipes dropped."""
    return [cell.strip(" ") for cell in split_row(line.strip(" "))]


def _callouts(tokens: list[PlainToken]) -> None:
    """`core.vault.obsidian_md._callouts` on these tokens: a quote whose first line is `[!kind]`."""
    i = 0
    while i < len(tokens):
        if tokens[i].type == "blockquote_open" and i + 2 < len(tokens) and tokens[i + 1].type == "paragraph_open":
            first, _, rest = tokens[i + 2].content.partition("\n")
            m = CALLOUT_LINE.match(first.strip())
            if m is not None:
                _make_callout(tokens, i, m, rest)
        i += 1


def _make_callout(tokens: list[PlainToken], i: int, m: re.Match[str], rest: str) -> None:
    kind, fold, title = m.group(1).lower(), m.group(2), m.group(3).strip()
    callout = Callout(kind, title, fold)
    if title.casefold() == callout.label.casefold():
        title = ""
        callout = Callout(kind, "", fold)
    tokens[i].type, tokens[i].meta = "callout_open", {"callout": callout}
    close = matching_close(tokens, i)
    if close is not None:
        tokens[close].type = "callout_close"
    title_tokens = [PlainToken("callout_title_open"), PlainToken("inline", title), PlainToken("callout_title_close")] if title else []
    if rest.strip():
        tokens[i + 2].content = rest
        tokens[i + 1 : i + 1] = title_tokens
    else:
        tokens[i + 1 : i + 4] = title_tokens
