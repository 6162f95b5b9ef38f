"""Pull the text out of a PDF, page by page, the way a reader would read it.

PDFium (through pypdfium2) does the parsing: it is the engine Chrome ships, it
reads damaged files leniently, gives text in content order (reading order for
the documents people keep) and has wheels for Windows, macOS and Linux. See
docs/attachments.md for the comparison with pypdf that chose it.

Pages are opened, read and closed one at a time, so a 3,000-page manual never
sits in memory whole: PDFium reads the file on demand. What a page yields is
repaired for search: ligatures spelled out, words broken at a line end joined,
and running headers and footers (the lines repeated at the top or bottom of many
pages, page numbers included) dropped, since they would match every query about
the book's title and bury the page that answers it.

This module is pure apart from PDFium; it runs inside the extraction worker's
child process (see `core.vault.attachments`), so a PDF that crashes or hangs
PDFium never takes the app down.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from core.base.lazy_re import LazyPattern

LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"}
MIN_TEXT_CHARS_PER_PAGE = 8  # below this on average the PDF is a scan without a text layer
EDGE_LINES = 2  # lines at the top and bottom of a page that may be a running header or footer
_TRANSLATE = str.maketrans(LIGATURES | {"\u00ad": "", "\x00": "", "\ufeff": ""})
_SOFT_BREAK = re.compile(r"\ufffe(?=(\w?))")  # PDFium's mark for a word hyphenated at a line end
_HYPHEN_EOL = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_]*[a-zà-ÿ])")
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?(?:\d+|[ivxlcdm]+)(?:\s*(?:/|of)\s*\d+)?$", re.IGNORECASE)
_NUMBERING = re.compile(r"^(?:chapter|section|appendix)?(?:[a-z]\.)?\d+(?:\.\d+)*[.:]?")  # "1.8", "a.2", "chapter3:"
_LEADER = re.compile(r"(?:\s?\.){4,}\s*(?:\d+|[ivxlcdm]+)\s*$", re.IGNORECASE)  # "Fixed-width files . . . . 26"
_NOISE = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# Scripts written without spaces between words (Han, kana and their punctuation; not Hangul,
# which spaces its words): a line end between two of them is no word boundary.
_CJK = "\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f"
_CJK_WRAP = LazyPattern(f"(?<=[{_CJK}])\n(?=[{_CJK}])")  # ~2 ms to compile: only for a PDF's text
_SENTENCE_END = tuple("。．！？：」』）")
FULL_LINE = 0.8  # a line this share of the page's longest one reaches the right margin: it wrapped


class PdfProblem(Exception):
    """The PDF cannot be indexed; `reason` is a `SkipReason` value, the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PdfPage:
    number: int  # 1-based, as viewers and citations count
    text: str
    # Where each outline (bookmark) trail starts in `text`: (character offset, heading path).
    # The first starts at 0 and carries the trail in force at the top of the page ("" without bookmarks).
    sections: tuple[tuple[int, str], ...] = ((0, ""),)

    @property
    def heading_path(self) -> str:
        return self.sections[0][1]


@dataclass(frozen=True, slots=True)
class PdfText:
    title: str | None  # from the document information, or the first bookmark
    pages: tuple[PdfPage, ...]
    dropped_lines: int  # header/footer lines removed


def extract_pdf(path: Path, *, max_pages: int = 100_000) -> PdfText:
    """Read every page's text. Raises `PdfProblem` for encrypted, malformed or scanned PDFs."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise PdfProblem("encrypted", "the PDF is protected by a password") from None
        raise PdfProblem("malformed", f"PDFium cannot open it ({exc})") from None
    try:
        count = len(pdf)
        if count == 0:
            raise PdfProblem("malformed", "the PDF has no pages")
        if count > max_pages:
            raise PdfProblem("too_large", f"{count:,} pages is over the {max_pages:,}-page limit")
        raw_pages: list[str] = []
        for i in range(count):
            page = pdf[i]
            try:
                textpage = page.get_textpage()
                try:
                    raw_pages.append(textpage.get_text_range())
                finally:
                    textpage.close()
            finally:
                page.close()
        marks = _outline(pdf, count)
        title = _metadata_title(pdf)
    finally:
        pdf.close()
    pages = [clean_page_text(t) for t in raw_pages]
    if sum(len("".join(t.split())) for t in pages) < MIN_TEXT_CHARS_PER_PAGE * count:
        raise PdfProblem("no_text", "the PDF has no text layer (a scan?); it would need OCR")
    kept, dropped = drop_running_lines(pages)
    sections = place_outline(kept, marks)
    title = title or _first_line(kept)
    return PdfText(title, tuple(PdfPage(i + 1, t, sections[i]) for i, t in enumerate(kept)), dropped)


def clean_page_text(text: str) -> str:
    """Repair one page's text: line ends, ligatures, hyphenation at line ends, control characters."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = unicodedata.normalize("NFC", text.translate(_TRANSLATE))
    # PDFium joins a word broken at a line end and leaves U+FFFE where the hyphen was: drop it,
    # unless a capital follows ("S-Plus"), where the hyphen belongs to the word.
    text = _SOFT_BREAK.sub(lambda m: "-" if m.group(1)[:1].isupper() else "", text)
    text = _HYPHEN_EOL.sub("", text)  # other producers keep "hyphen-\nated": join when lower case follows
    text = _NOISE.sub(" ", text)
    # Table-of-contents and index entries (dot leaders to a page number) repeat every heading
    # once more, on a page that answers nothing: they would outrank the section itself.
    lines = [ln.rstrip() for ln in text.split("\n") if not _LEADER.search(ln)]
    return join_cjk_wraps("\n".join(lines).strip())


def join_cjk_wraps(text: str) -> str:
    """Join Japanese and Chinese lines that the typesetter wrapped, wherever the word falls.

    CJK text wraps at any character, so a line end often splits a word ("圧" / "縮") and the
    search, which pairs neighbouring characters, would never see it whole. A line is joined
    to the next only where it wrapped: it fills the measure (as wide as the page's longest
    line, counting full-width characters twice) and does not end a sentence. A short line,
    a heading or the last line of a paragraph, keeps its line end.
    """
    if "\n" not in text or not _CJK_WRAP.search(text):
        return text
    lines = text.split("\n")
    widths = [_width(ln) for ln in lines]
    full = FULL_LINE * max(widths)
    out = [lines[0]]
    for prev, width, line in zip(lines, widths, lines[1:]):
        wrapped = width >= full and not prev.endswith(_SENTENCE_END)
        if wrapped and _CJK_WRAP.search(prev[-1:] + "\n" + line[:1]):
            out[-1] += line
        else:
            out.append(line)
    return "\n".join(out)


def _width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def drop_running_lines(pages: list[str]) -> tuple[list[str], int]:
    """Drop running headers/footers: lines at a page's edge repeated on many pages (numbers aside).

    A line counts when, with its digits ignored, it sits among the first or last `EDGE_LINES`
    lines of at least three pages and of at least a fifth of them — or of three pages when it
    carries a number (the page number of a chapter's running head). Bare page numbers go always.
    """
    if len(pages) < 3:
        return [_drop_page_number(p) for p in pages], 0
    counts: Counter[str] = Counter()
    for text in pages:
        counts.update({_key(ln) for ln in _edges(text.split("\n"))})
    total = len(pages)
    repeated = {k for k, n in counts.items() if k and n >= 3 and (n * 5 >= total or "#" in k)}
    out: list[str] = []
    dropped = 0
    for text in pages:
        lines = text.split("\n")
        edge = set(_edge_indexes(lines))
        keep = []
        for i, ln in enumerate(lines):
            if i in edge and (_key(ln) in repeated or _PAGE_NUMBER.match(ln.strip())):
                dropped += 1
                continue
            keep.append(ln)
        out.append("\n".join(keep).strip())
    return out, dropped


def _drop_page_number(text: str) -> str:
    lines = text.split("\n")
    edge = set(_edge_indexes(lines))
    return "\n".join(ln for i, ln in enumerate(lines) if not (i in edge and _PAGE_NUMBER.match(ln.strip()))).strip()


def _edge_indexes(lines: list[str]) -> list[int]:
    filled = [i for i, ln in enumerate(lines) if ln.strip()]
    return filled[:EDGE_LINES] + filled[-EDGE_LINES:]


def _edges(lines: list[str]) -> list[str]:
    return [lines[i] for i in _edge_indexes(lines)]


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).lower())


def _metadata_title(pdf: object) -> str | None:
    try:
        title = str(pdf.get_metadata_value("Title") or "").strip()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a broken info dictionary just means no title
        return None
    # Word and friends often write the file name or a placeholder: no better than the stem.
    if not title or title.lower() in ("untitled", "untitled document") or title.lower().endswith((".doc", ".docx", ".pdf")):
        return None
    return " ".join(title.split())


def _first_line(pages: list[str]) -> str | None:
    """The first short line with letters: on a title page, the title."""
    for line in pages[0].split("\n")[:3] if pages else []:
        line = " ".join(line.split())
        # A title is short and wordy (CJK writes words without spaces); a run-on line of a
        # page set without line breaks is not.
        wordy = " " in line or any(ord(c) >= 0x2E80 for c in line)
        if 3 <= len(line) <= 80 and wordy and sum(c.isalpha() for c in line) * 2 > len(line):
            return line
    return None


def _outline(pdf: object, count: int) -> list[tuple[int, int, str]]:
    """The bookmarks as (page index, level, title), in outline order."""
    marks: list[tuple[int, int, str]] = []
    try:
        for bm in pdf.get_toc(max_depth=6):  # type: ignore[attr-defined]
            dest = bm.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((bm.get_title() or "").split())
            if index is not None and 0 <= index < count and title:
                marks.append((index, bm.level, title))
    except Exception:  # noqa: BLE001 - a broken outline only costs the heading paths
        return []
    return marks


def place_outline(pages: list[str], marks: list[tuple[int, int, str]]) -> list[tuple[tuple[int, str], ...]]:
    """Split each page where its bookmarks' headings are printed, so a chunk gets the right trail.

    A bookmark knows its page but not its line: the heading is found by its title among the
    page's lines (the first line that starts with it, spaces ignored); one not found starts at
    the top of its page, as a chapter does.
    """
    trail: list[tuple[int, str]] = []
    by_page: dict[int, list[tuple[int, str]]] = {}
    for index, level, title in marks:
        by_page.setdefault(index, []).append((level, title))
    out: list[tuple[tuple[int, str], ...]] = []
    for index, text in enumerate(pages):
        sections: list[tuple[int, str]] = [(0, _joined(trail))]
        search_from = 0
        for level, title in by_page.get(index, []):
            at = _heading_offset(text, title, search_from)
            while trail and trail[-1][0] >= level:
                trail.pop()
            trail.append((level, title))
            offset = 0 if at is None else at
            search_from = max(search_from, offset)
            if offset <= sections[-1][0]:
                sections[-1] = (sections[-1][0], _joined(trail))
            else:
                sections.append((offset, _joined(trail)))
        out.append(tuple(sections))
    return out


def _heading_offset(text: str, title: str, start: int) -> int | None:
    want = _NUMBERING.sub("", "".join(title.split()).lower())
    pos = text.rfind("\n", 0, start) + 1 if start else 0
    for line in text[pos:].split("\n"):
        squeezed = _NUMBERING.sub("", "".join(line.split()).lower())
        if squeezed and (squeezed.startswith(want) or (len(squeezed) >= 8 and want.startswith(squeezed))):
            return pos
        pos += len(line) + 1
    return None


def _joined(trail: list[tuple[int, str]]) -> str:
    return " > ".join(t for _, t in trail)
