"""Cut a chunk of markdown into the units an extractive answer may quote.

A unit is a sentence of prose, a list item, a table row or a code block (fenced,
indented, or a paragraph that is one inline-code span as in tldr pages). A code
block carries the sentence that introduces it, because "use `lsof -i :8000`"
without its code, or the code without its purpose, answers nothing; likewise a
table row carries its table's header ("Total storage | 1 GB" means nothing under
the wrong columns) and a list item the sentence that leads into the list
("…for the following services:").

Units are verbatim: the text is cut from the chunk, never rewritten, so the
answer can be checked against the note byte for byte. Link lists, bare links and
navigation lines are dropped here: they are never an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PROSE, ITEM, ROW, CODE = "prose", "item", "row", "code"
MIN_CHARS = 12
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_INLINE_CODE_LINE = re.compile(r"^`[^`]+`$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*\[`])")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|<https?://[^>]+>|https?://\S+")
_HTML = re.compile(r"^\s*<[a-zA-Z/!][^>]*>")
_WORD = re.compile(r"[^\W_]{2,}")


@dataclass(frozen=True, slots=True)
class Unit:
    """One quotable passage of a chunk."""

    kind: str
    text: str  # verbatim (a code block without its fences)
    position: int  # order inside the chunk
    language: str = ""
    intro: str = ""  # code: the sentence or item before it; row: its table's header row; item: the list's lead-in
    lead: str = ""  # for code: the two sentences before it, which often say what it is for (scoring only)


def is_boilerplate(text: str) -> bool:
    """Link lists, bare links, 'source' lines: words outside links are too few to say anything."""
    outside = _LINK.sub(" ", text)
    words = _WORD.findall(outside)
    if len(words) < 3:
        return True
    linked = sum(len(m.group(0)) for m in _LINK.finditer(text))
    return linked > 0.5 * len(text)


def _after_heading(lines: list[str], i: int) -> bool:
    """Whether the nearest non-blank line above line `i` is a heading (a list under it has no lead-in)."""
    for j in range(i - 1, -1, -1):
        if lines[j].strip():
            return lines[j].lstrip().startswith("#")
    return False


def split_units(text: str) -> list[Unit]:
    """The units of one chunk, in order; headings, images and HTML are left out."""
    return _Splitter(text.splitlines()).run()


class _Splitter:
    """One pass over a chunk's lines; each block kind (fence, indented code, table row,
    list item, paragraph) is read by its own method from line `i` on."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.i = 0
        self.out: list[Unit] = []
        self.paragraph: list[str] = []
        self.last_words = ""  # the latest prose/item text: the intro of a code block that follows
        self.recent: list[str] = []  # the last few sentences, the lead of a code block
        self.header = ""  # the current table's first row: the intro of its other rows
        self.list_lead = ""  # the sentence before the current list: the intro of its items

    def run(self) -> list[Unit]:
        lines = self.lines
        while self.i < len(lines):
            line = lines[self.i]
            stripped = line.strip()
            if not stripped.startswith("|") and not (stripped and set(stripped) <= set("-|:= ")):
                self.header = ""  # the table ended
            fence = _FENCE.match(line)
            if fence:
                self.close()
                self.fenced(fence.group(1), fence.group(2))
            elif line.startswith(("    ", "\t")) and not self.paragraph and stripped:
                self.indented()  # after a blank line (or a heading), not a list continuation
            elif not stripped or stripped.startswith("#") or _HTML.match(stripped) or set(stripped) <= set("-|:= *_"):
                self.close()
                self.i += 1
            elif stripped.startswith("|"):
                self.close()
                self.row(stripped)
            elif _ITEM.match(line):
                self.close()
                self.item(stripped)
            else:
                self.prose(stripped)
        self.close()
        return self.out

    def add(self, kind: str, body: str, language: str = "", intro: str = "") -> None:
        lead = " ".join(self.recent[-2:]) if kind == CODE else ""
        self.out.append(Unit(kind, body, len(self.out), language, intro, lead))
        if kind != CODE:
            self.recent.append(body)

    def close(self) -> None:
        """The paragraph read so far becomes sentences (or one inline-code unit)."""
        if not self.paragraph:
            return
        joined = " ".join(p.strip() for p in self.paragraph)
        self.paragraph.clear()
        if _INLINE_CODE_LINE.match(joined):
            self.add(CODE, joined.strip("`"), "", self.last_words)
            return
        for sentence in _SENTENCE.split(joined):
            sentence = sentence.strip()
            if len(sentence) >= MIN_CHARS and not is_boilerplate(sentence):
                self.add(PROSE, sentence)
            if sentence:
                self.last_words = sentence
                if is_boilerplate(sentence) or len(sentence) < MIN_CHARS:
                    self.recent.append(sentence)

    def fenced(self, marker: str, language: str) -> None:
        lines = self.lines
        body: list[str] = []
        self.i += 1
        while self.i < len(lines) and not lines[self.i].strip().startswith(marker):
            body.append(lines[self.i])
            self.i += 1
        self.i += 1  # the closing fence
        code = "\n".join(body).strip("\n")
        if code.strip():
            self.add(CODE, code, language, self.last_words)

    def indented(self) -> None:
        lines = self.lines
        start = self.i
        body: list[str] = []
        while self.i < len(lines) and (lines[self.i].startswith(("    ", "\t")) or not lines[self.i].strip()):
            body.append(lines[self.i][4:] if lines[self.i].startswith("    ") else lines[self.i].lstrip("\t"))
            self.i += 1
        code = "\n".join(body).strip("\n")
        if self.out and self.out[-1].kind == ITEM and not code.strip().startswith(("$", "`")) and "\n" not in code:
            return  # a wrapped list item rather than code
        if _list_code(lines, start, self.i) is False or _images_and_captions(code):
            return  # an item's further paragraphs, images or captions: markdown, not code
        self.add(CODE, code, "", self.last_words)

    def row(self, stripped: str) -> None:
        row = stripped.strip("|").strip()  # verbatim between the outer pipes
        if len(row) >= MIN_CHARS and not is_boilerplate(row):
            self.add(ROW, row, "", self.header)
        self.header = self.header or row
        self.i += 1

    def item(self, stripped: str) -> None:
        lines = self.lines
        out = self.out
        if not out or out[-1].kind != ITEM or _after_heading(lines, self.i):  # a new list: its lead-in, if any
            led = out and out[-1].kind == PROSE and out[-1].text == self.last_words and not _after_heading(lines, self.i)
            self.list_lead = self.last_words if led else ""
        item = [stripped]
        self.i += 1
        while self.i < len(lines) and lines[self.i].strip() and not _ITEM.match(lines[self.i]) and not _FENCE.match(lines[self.i]):
            if lines[self.i].strip().startswith(("#", "|")):
                break
            item.append(lines[self.i].strip())
            self.i += 1
        joined = " ".join(item)
        words = _ITEM.sub("", joined)
        if len(words) >= MIN_CHARS and not is_boilerplate(words):
            self.add(ITEM, joined, "", self.list_lead)
        else:
            self.recent.append(joined)
        self.last_words = joined

    def prose(self, stripped: str) -> None:
        if stripped.startswith(">"):
            stripped = stripped.lstrip("> ").strip()
            if not stripped:
                self.close()
                self.i += 1
                return
        self.paragraph.append(stripped)
        self.i += 1


def _list_code(lines: list[str], start: int, end: int) -> bool | None:
    """For indented lines [start, end) under a list item: whether markdown reads them as code.

    None when they are not under a list item. Markdown decides by the item's own indentation,
    which a line scanner does not know: `    ![image](x.png)` under `- item` is the item's content.
    """
    j = start - 1
    while j >= 0 and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
        j -= 1
    if j < 0 or _ITEM.match(lines[j]) is None:
        return None
    from core.vault.obsidian_md import parse

    offset = start - j
    return any(t.type in ("code_block", "fence") and t.map is not None and t.map[1] > offset for t in parse("\n".join(lines[j:end])))


def _images_and_captions(code: str) -> bool:
    """Indented image embeds with their HTML captions (a list item's pictures cut off from the item)."""
    rows = [row.strip() for row in code.splitlines() if row.strip()]
    return any(r.startswith("![") for r in rows) and all(r.startswith(("![", "<")) for r in rows)
