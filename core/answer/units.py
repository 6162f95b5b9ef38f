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
    out: list[Unit] = []
    lines = text.splitlines()
    paragraph: list[str] = []
    last_words = ""  # the latest prose/item text: the intro of a code block that follows
    header = ""  # the current table's first row: the intro of its other rows
    list_lead = ""  # the sentence before the current list: the intro of its items
    recent: list[str] = []  # the last few sentences, the lead of a code block
    i = 0

    def add(kind: str, body: str, language: str = "", intro: str = "") -> None:
        lead = " ".join(recent[-2:]) if kind == CODE else ""
        out.append(Unit(kind, body, len(out), language, intro, lead))
        if kind != CODE:
            recent.append(body)

    def close() -> None:
        nonlocal last_words
        if not paragraph:
            return
        joined = " ".join(p.strip() for p in paragraph)
        paragraph.clear()
        if _INLINE_CODE_LINE.match(joined):
            add(CODE, joined.strip("`"), "", last_words)
            return
        for sentence in _SENTENCE.split(joined):
            sentence = sentence.strip()
            if len(sentence) >= MIN_CHARS and not is_boilerplate(sentence):
                add(PROSE, sentence)
            if sentence:
                last_words = sentence
                if is_boilerplate(sentence) or len(sentence) < MIN_CHARS:
                    recent.append(sentence)

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped.startswith("|") and not (stripped and set(stripped) <= set("-|:= ")):
            header = ""  # the table ended
        fence = _FENCE.match(line)
        if fence:
            close()
            marker, language = fence.group(1), fence.group(2)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence
            code = "\n".join(body).strip("\n")
            if code.strip():
                add(CODE, code, language, last_words)
            continue
        if line.startswith(("    ", "\t")) and not paragraph and stripped:
            # An indented code block: after a blank line (or a heading), not a list continuation.
            body = []
            while i < len(lines) and (lines[i].startswith(("    ", "\t")) or not lines[i].strip()):
                body.append(lines[i][4:] if lines[i].startswith("    ") else lines[i].lstrip("\t"))
                i += 1
            code = "\n".join(body).strip("\n")
            if out and out[-1].kind == ITEM and not code.strip().startswith(("$", "`")) and "\n" not in code:
                continue  # a wrapped list item rather than code
            add(CODE, code, "", last_words)
            continue
        if not stripped or stripped.startswith("#") or _HTML.match(stripped) or set(stripped) <= set("-|:= *_"):
            close()
            i += 1
            continue
        if stripped.startswith("|"):
            close()
            row = stripped.strip("|").strip()  # verbatim between the outer pipes
            if len(row) >= MIN_CHARS and not is_boilerplate(row):
                add(ROW, row, "", header)
            header = header or row
            i += 1
            continue
        if _ITEM.match(line):
            close()
            if not out or out[-1].kind != ITEM or _after_heading(lines, i):
                led = out and out[-1].kind == PROSE and out[-1].text == last_words and not _after_heading(lines, i)
                list_lead = last_words if led else ""
            item = [stripped]
            i += 1
            while i < len(lines) and lines[i].strip() and not _ITEM.match(lines[i]) and not _FENCE.match(lines[i]):
                if lines[i].strip().startswith(("#", "|")):
                    break
                item.append(lines[i].strip())
                i += 1
            joined = " ".join(item)
            words = _ITEM.sub("", joined)
            if len(words) >= MIN_CHARS and not is_boilerplate(words):
                add(ITEM, joined, "", list_lead)
            else:
                recent.append(joined)
            last_words = joined
            continue
        if stripped.startswith(">"):
            stripped = stripped.lstrip("> ").strip()
            if not stripped:
                close()
                i += 1
                continue
        paragraph.append(stripped)
        i += 1
    close()
    return out
