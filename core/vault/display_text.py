"""A chunk's markdown as the text a person reads: what Obsidian shows, without its syntax.

Snippets, backlink and related-note lines, quoted answers, MCP evidence and the CLI show
this text. Callouts read "Tip: Title — text", table rows "cell · cell", embeds "↪ Note ›
Heading" (images and icons are left out), tasks "☐"/"☑", links their label; comments,
block ids, front matter and HTML tags are gone and entities decoded. Code keeps its
characters between backticks (a code block as one backtick run), so a view can show it as
code and nothing inside it is mistaken for syntax.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from core.vault.display_plain import plain_tokens
from core.vault.display_tokens import ReadToken
from core.vault.links import is_attachment, split_wikilink
from core.vault.obsidian_md import Callout, parse

if TYPE_CHECKING:
    from markdown_it.token import Token

CELL_SEPARATOR = " · "
_TAG = re.compile(r"<[^>]*>")
_TABLE_LINE = re.compile(r"^\s*\|.*\|\s*$")
_SEPARATOR_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FILE_NAME = re.compile(r"^\S+\.[A-Za-z0-9]{2,5}$")
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_LITERAL_TICKS = re.compile(r"`{3,}\S*")
_BLOCK_ID_LINE = re.compile(r"^\s*\^[A-Za-z0-9-]+\s*$", re.MULTILINE)
_MARKUP = re.compile(r"[*_=~`<&$]")
_HIDDEN_HTML = re.compile(r"</?(?:script|style)\b", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_CALLOUT_START = re.compile(r"^\[![^\]\s]+\]")
_SPACES = re.compile(r"[ \t]+")
_SKIPPED_BLOCKS = {"front_matter", "hr", "footnote_anchor"}


def display_text(markdown: str) -> str:
    """`markdown` as read: one line per block, syntax gone, code between backticks."""
    if not markdown.strip():
        return ""
    return _lines(parse(_prepared(markdown)))


def plain_text(markdown: str) -> str | None:
    """`display_text` read without markdown-it (`core.vault.display_plain`), or None for a chunk it declines.

    The same words, marks and order as `display_text`; only its line breaks and runs of
    spaces may differ (a hard break, spacing inside code), which `one_line` joins away.
    """
    if not markdown.strip():
        return ""
    tokens = plain_tokens(_prepared(markdown))
    return None if tokens is None else _lines(tokens)


@lru_cache(maxsize=4096)
def one_line(markdown: str) -> str:
    """The display text on one line, for snippets and list rows.

    Cached: parsing costs ~1 ms a chunk, and the same chunks come back search after search
    (a result list makes ~40 snippets, each note's other passages included). A chunk in the
    shapes `core.vault.display_plain` reads never reaches markdown-it, so a cold `cairn
    search` does not import it for such snippets.
    """
    shown = plain_text(markdown)
    return " ".join((display_text(markdown) if shown is None else shown).split())


def _prepared(markdown: str) -> str:
    return _bare_table_rows(_balanced_fences(markdown))


def _lines(tokens: Sequence[ReadToken]) -> str:
    lines: list[str] = []
    _Walker(lines).blocks(tokens)
    return "\n".join(line for line in (_tidy(ln) for ln in lines) if line)


def passage(text: str, *, row: bool = False) -> str:
    """A passage cut from a chunk (an answer's quoted sentence, item or table `row`) as read, on one line.

    The cut leaves no quote marker, so a callout's `[!kind]` line is read as the callout it
    opened, and a row is read as a row though its outer pipes were cut; a list item's own
    bullet is left out (the answer lists its quotes itself).
    """
    text = text.strip()
    if row:
        text = f"| {text} |"
    elif _CALLOUT_START.match(text):
        text = "> " + text
    return one_line(text).removeprefix("• ")


def heading_text(heading_path: str) -> str:
    """A chunk's heading path (`A > B`, as the chunker joins raw heading lines) as read, `A > B`."""
    if not _MARKUP.search(heading_path) and "[" not in heading_path and "%" not in heading_path:
        return heading_path
    return " > ".join(one_line(part) for part in heading_path.split(" > "))


def code_span(code: str) -> str:
    """`code` between enough backticks that none inside it closes the span."""
    run = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * (run + 1)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{fence}{pad}{code}{pad}{fence}"


def _tidy(line: str) -> str:
    """Runs of spaces as one, except inside code (whose spacing is part of it)."""
    if "`" not in line:
        return _SPACES.sub(" ", line).strip()
    parts: list[str] = []
    pos = 0
    for m in code_spans(line):
        parts += [_SPACES.sub(" ", line[pos : m.start()]), m.group(0)]
        pos = m.end()
    parts.append(_SPACES.sub(" ", line[pos:]))
    return "".join(parts).strip()


def unmarked(text: str) -> str:
    """Display text with its code's backticks taken off, for views that cannot show code as code
    (a plain-text row, a screen reader)."""
    if "`" not in text:
        return text
    return _CODE_SPAN.sub(lambda m: _inner(m.group(0)), text)


def _inner(span: str) -> str:
    code = span.strip("`")
    return code[1:-1] if len(code) > 1 and code.startswith(" ") and code.endswith(" ") else code


def code_spans(text: str) -> Iterator[re.Match[str]]:
    """The backtick code spans of display text (as `code_span` writes them)."""
    return _CODE_SPAN.finditer(text)


def _balanced_fences(text: str) -> str:
    """A chunk cut inside a code block starts with code: its first fence line closes, not opens.

    The chunker may cut a long code block; the next chunk then holds code and a bare closing
    fence, which markdown would read the other way round (prose, then an open fence).
    """
    if "```" not in text and "~~~" not in text:
        return text
    fences = list(_FENCE_LINE.finditer(text))
    first = fences[0] if fences else None
    # A bare fence after some text, with no partner: it closes code the chunk began inside
    # (a fence the chunk starts with opens code the chunk was cut inside, which markdown reads right).
    if first is not None and len(fences) % 2 == 1 and not first.group(2).strip() and text[: first.start()].strip():
        return first.group(1) + "\n" + text
    return text


def _bare_table_rows(text: str) -> str:
    """Table rows without their header (a quoted row, a chunk cut inside a table) read as rows too."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    if not any(_TABLE_LINE.match(ln) or _SEPARATOR_ROW.match(ln) for ln in lines):
        return text
    in_table = _table_lines(lines)
    out: list[str] = []
    for i, ln in enumerate(lines):
        if i in in_table:
            out.append(ln)
        elif _SEPARATOR_ROW.match(ln) and "|" in ln:
            continue  # a separator whose header row is in the chunk before
        elif _TABLE_LINE.match(ln):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip()[1:-1])]
            out.append(CELL_SEPARATOR.join(c.replace("\\|", "|") for c in cells if c) + "\n")
        else:
            out.append(ln)
    return "\n".join(out)


def _table_lines(lines: Sequence[str]) -> set[int]:
    """Lines of whole tables: a header row, its separator row and the rows after them."""
    found: set[int] = set()
    for i in range(1, len(lines)):
        if _SEPARATOR_ROW.match(lines[i]) and "|" in lines[i - 1] and "-" in lines[i] and i - 1 not in found:
            j = i + 1
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            found.update(range(i - 1, j))
    return found


class _Walker:
    """Walks block tokens, writing one line per paragraph, heading, list item, row or code block."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.prefix = ""  # a marker waiting for the next line: "• ", "☐ ", "Tip: "
        self.ordinals: list[int] = []  # the next number of each open ordered list
        self.cells: list[str] | None = None

    def emit(self, text: str) -> None:
        if self.cells is not None:
            self.cells.append(text)
            return
        if not text.strip() and not self.prefix:
            return
        self.lines.append(self.prefix + text)
        self.prefix = ""

    def blocks(self, tokens: Sequence[ReadToken]) -> None:
        for tok in tokens:
            if tok.type in _SKIPPED_BLOCKS:
                continue
            handler = getattr(self, "on_" + tok.type, None)
            if handler is not None:
                handler(tok)
            elif tok.type == "inline":
                self.emit(inline_text(tok.children or []))

    def on_fence(self, tok: ReadToken) -> None:
        self.emit(code_span(tok.content.strip("\n")))

    on_code_block = on_fence

    def on_math_block(self, tok: ReadToken) -> None:
        self.emit(f"$${tok.content.strip()}$$")

    def on_html_block(self, tok: ReadToken) -> None:
        self.emit(_BLOCK_ID_LINE.sub("", strip_html(tok.content)))

    def on_callout_open(self, tok: ReadToken) -> None:
        callout: Callout = tok.meta["callout"]
        self.prefix += f"{callout.label}: "

    def on_callout_title_close(self, tok: ReadToken) -> None:
        if self.lines:  # the body goes on the title's line: "Tip: Title — text"
            self.prefix = self.lines.pop() + " — " + self.prefix

    def on_callout_close(self, tok: ReadToken) -> None:
        if self.prefix.strip():  # a callout with a title and no body
            self.lines.append(self.prefix.removesuffix(" — ").rstrip(": "))
        self.prefix = ""

    def on_bullet_list_open(self, tok: ReadToken) -> None:
        self.ordinals.append(0)

    def on_ordered_list_open(self, tok: ReadToken) -> None:
        self.ordinals.append(int(tok.attrGet("start") or 1))

    def on_bullet_list_close(self, tok: ReadToken) -> None:
        self.ordinals.pop()

    on_ordered_list_close = on_bullet_list_close

    def on_list_item_open(self, tok: ReadToken) -> None:
        checked = tok.meta.get("checked") if tok.meta else None
        if checked is not None:
            self.prefix += "☑ " if checked else "☐ "
        elif self.ordinals and self.ordinals[-1]:
            self.prefix += f"{self.ordinals[-1]}. "
            self.ordinals[-1] += 1
        else:
            self.prefix += "• "

    def on_tr_open(self, tok: ReadToken) -> None:
        self.cells = []

    def on_tr_close(self, tok: ReadToken) -> None:
        cells, self.cells = self.cells or [], None
        self.emit(CELL_SEPARATOR.join(c for c in cells if c.strip()))

    def on_footnote_open(self, tok: ReadToken) -> None:
        self.prefix = f"[{_footnote_number(tok)}] "


def inline_text(children: Sequence[ReadToken]) -> str:
    """An inline token's children as read."""
    out: list[str] = []
    hidden = False  # inside an inline <script> or <style>: its text is not shown
    for tok in children:
        kind = tok.type
        if kind == "html_inline" and _HIDDEN_HTML.match(tok.content):
            hidden = not tok.content.startswith("</")
            continue
        if hidden:
            continue
        if kind == "text":  # backticks left as text (an unclosed run) read as code too
            out.append(_LITERAL_TICKS.sub(lambda m: code_span(m.group(0)), tok.content) if "```" in tok.content else tok.content)
        elif kind in ("softbreak", "hardbreak"):
            out.append(" " if kind == "softbreak" else "\n")
        elif kind == "code_inline":
            out.append(code_span(tok.content))
        elif kind == "math_inline":
            out.append(f"${tok.content}$")
        elif kind == "wikilink":
            out.append(wikilink_text(tok.content, bool(tok.meta.get("embed"))))
        elif kind == "image":  # its alt text, unless that is only a file name
            out.append("" if _FILE_NAME.match(tok.content) else tok.content)
        elif kind == "html_inline":
            out.append("\n" if tok.content.lower().startswith("<br") else "")
        elif kind == "footnote_ref":
            out.append(f"[{_footnote_number(tok)}]")
    return "".join(out)


def wikilink_text(inner: str, embed: bool) -> str:
    """A wikilink as read: its label; an embed as "↪ Note › Heading"; images and icons as nothing."""
    target, anchor, label = split_wikilink(inner)
    if not embed:
        if "|" not in inner and anchor.startswith("^"):
            return label.replace("^", "", 1)  # `[[#^block]]`: the block's name, not its marker
        return inline_text(_parse_inline(label)) if _MARKUP.search(label) else label
    if is_attachment(target):
        ext = target.rpartition(".")[2].lower()
        if ext == "pdf":
            page = anchor.removeprefix("page=") if anchor.startswith("page=") else ""
            return f"📎 {target.rpartition('/')[2]}" + (f", page {page}" if page else "")
        return ""  # an image or an icon: nothing to read in a line of text
    if "|" in inner:
        return f"↪ {label}"
    shown = target.rpartition("/")[2] or "this note"
    if anchor:
        shown += " › " + anchor.lstrip("^").replace("#", " › ") if not anchor.startswith("^") else " (block)"
    return f"↪ {shown}"


def _parse_inline(text: str) -> list[Token]:
    from core.vault.obsidian_md import obsidian_parser

    tokens = obsidian_parser().parseInline(text)
    return tokens[0].children or [] if tokens else []


def strip_html(fragment: str) -> str:
    """Raw HTML as its text: tags dropped (scripts and styles with their content), entities decoded.

    `html` is imported here, as nh3 is: its entity tables cost a cold search ~1.4 ms, and most
    result pages hold no raw HTML."""
    import html

    import nh3

    text = fragment.replace("<br>", "\n").replace("<br/>", "\n").replace("<br />", "\n")
    cleaned = nh3.clean(text, tags=set(), attributes={}, strip_comments=True)
    return html.unescape(_TAG.sub("", cleaned))


def _footnote_number(tok: ReadToken) -> int:
    return int(tok.meta.get("id", 0)) + 1 if tok.meta else 1
