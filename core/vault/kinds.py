"""The kinds of file Cairn reads beside notes, and the shape every reader hands back.

Each kind has a module that wraps the library made for it (PDFium for PDFs, python-docx
for Word, EbookLib for e-books, readability-lxml for saved web pages, the standard
library's `email` for mail, `json` for AI chat exports). Every reader returns a
`KindText`: numbered *units* (a PDF's page, an e-book's chapter, a mailbox's message, an
export's conversation; a Word document or a web page is one unit), each with the points
where its headings start. The indexer chunks units the same way for every kind, so a
chunk never crosses a unit, carries its unit number (the Preview shows that unit) and the
heading path that a citation names ("report.docx › Budget", "mail.mbox › Subject (date)").

All readers run inside the extractor's child process (`core.vault.extractor`) with a
time and a memory limit, and raise `PdfProblem` (the same skip-and-report type as PDFs)
for a file they cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import zipfile  # imported by check_zip: a search opens the scanner, never an archive

    from core.vault.pdf import PdfPage  # imported where a page is made: a search never reads a file

EXTRACTOR_VERSION = "pdf-2"  # part of the index's chunking hash: a change here re-extracts every PDF (kept here, not in
# core.vault.pdf, so a search that checks the hash does not import the PDF reader's module)
HEADING_JOIN = " > "  # as PDF outline trails: the heading path's separator everywhere
MAX_UNPACKED_BYTES = 400 * 1024 * 1024  # a .docx/.epub that unpacks to more is a zip bomb (or no document)
MAX_RATIO = 200  # compressed-to-unpacked ratio above which a zip member is a bomb (text packs ~5-20x)


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of file: how it is named, what a unit of it is called, how big it may be."""

    name: str  # the `doc_type` of its documents and the `type:` filter's value
    suffixes: tuple[str, ...]
    label: tuple[str, str]  # "Word document", "Word documents"
    unit: str | None  # what a numbered unit is called in the Preview ("message"); None: one unit
    big: bool  # read in a streaming or paged way: uses `max_attachment_bytes`, not the notes' limit
    file_names: tuple[str, ...] = ()  # exact names instead of suffixes (an export's conversations.json)


KINDS: tuple[Kind, ...] = (
    Kind("pdf", (".pdf",), ("PDF", "PDFs"), "page", True),
    Kind("txt", (".txt",), ("text file", "text files"), None, False),
    Kind("canvas", (".canvas",), ("canvas", "canvases"), None, False),  # Obsidian's JSON Canvas, read in-process (core.vault.canvas)
    Kind("docx", (".docx",), ("Word document", "Word documents"), None, True),
    Kind("epub", (".epub",), ("e-book", "e-books"), "chapter", True),
    Kind("html", (".html", ".htm", ".mhtml", ".mht"), ("web page", "web pages"), None, False),
    Kind("email", (".eml", ".mbox"), ("mail file", "mail files"), "message", True),
    Kind("chat", (), ("AI chat export", "AI chat exports"), "conversation", True, ("conversations.json",)),
    # Text by OCR (core.vault.ocr_text), off unless switched on: it needs the optional `ocr` extra.
    Kind("image", (".png", ".jpg", ".jpeg", ".webp"), ("image (text by OCR)", "images (text by OCR)"), None, False),
)
DEFAULT_KINDS_OFF = ("image",)  # as `EngineConfig.kinds_off`: OCR is opt-in
KIND_BY_NAME = {k.name: k for k in KINDS}
KIND_NAMES = tuple(k.name for k in KINDS)


# By suffix (each is one dot: the file name's last) and by exact name: `kind_of` is asked
# several times per note of a sync (tldr: 38k calls, ~4 % of a cold index as a loop over KINDS).
_BY_SUFFIX = {suffix: k for k in KINDS for suffix in k.suffixes}
_BY_FILE_NAME = {name: k for k in KINDS for name in k.file_names}


def kind_of(rel_path: str) -> Kind | None:
    """The kind of an attachment's path; None for a note or a file Cairn does not read."""
    base = rel_path.rpartition("/")[2].lower()
    dot = base.rfind(".")
    found = _BY_SUFFIX.get(base[dot:]) if dot >= 0 else None
    return found if found is not None else _BY_FILE_NAME.get(base)


def attachment_kind(rel_path: str) -> str | None:
    """The kind ('pdf', 'txt', 'canvas', 'docx', 'epub', 'html', 'email', 'chat', 'image') of an attachment's
    name; None for a note or anything else."""
    kind = kind_of(rel_path)
    return kind.name if kind is not None else None


def kind_patterns(names: tuple[str, ...]) -> tuple[str, ...]:
    """Ignore patterns (gitignore style) that leave out the kinds `names`."""
    kinds = [KIND_BY_NAME[n] for n in names if n in KIND_BY_NAME]
    return tuple(p for k in kinds for p in (*(f"*{s}" for s in k.suffixes), *k.file_names))


def unit_label(rel_path: str, number: int | None) -> str:
    """How a unit is named to a person: 'p. 3', 'chapter 3', 'message 3'; '' for a one-unit file."""
    kind = kind_of(rel_path)
    if number is None or kind is None or kind.unit is None:
        return ""
    return f"p. {number}" if kind.unit == "page" else f"{kind.unit} {number}"


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One line OCR recognised, with the box around it in the page image's pixels."""

    text: str
    box: tuple[float, float, float, float]  # left, top, right, bottom


@dataclass(frozen=True, slots=True)
class OcrPage:
    """What OCR read on one image or scanned page: the lines and the size of the image they sit on.

    The Preview draws the boxes of lines holding the query's words over the image, so the
    boxes are kept with the text (in the index's folder, `core.index.ocr_store`).
    """

    number: int  # 1 for an image; the page of a scanned PDF
    width: int
    height: int
    lines: tuple[OcrLine, ...]

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


@dataclass(frozen=True, slots=True)
class KindText:
    """A file's text as numbered units; what every kind's reader returns."""

    title: str | None
    pages: tuple[PdfPage, ...]
    dropped_lines: int = 0  # PDFs: running headers and footers removed
    date: str | None = None  # ISO date of a single e-mail message
    notes: tuple[str, ...] = ()  # what was left out and why (shown as the file's warnings)
    ocr: tuple[OcrPage, ...] = ()  # text by OCR: the lines with their boxes, page by page
    unit_count: int = 0  # a scanned PDF read in portions: how many pages the whole file has


@dataclass
class UnitBuilder:
    """Puts one unit's text together block by block, noting where each heading starts.

    Heading levels work as in markdown: a heading closes every open heading of its level or
    deeper, so the path is the trail from the unit's top heading down to this one.
    """

    top: str = ""  # the unit's own heading (an e-book's chapter trail, a message's subject)
    parts: list[str] = field(default_factory=list)
    size: int = 0
    trail: list[tuple[int, str]] = field(default_factory=list)
    sections: list[tuple[int, str]] = field(default_factory=list)

    def heading(self, level: int, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            return
        if not self.trail and self.top.rpartition(HEADING_JOIN)[2] == title:
            self.block(title)  # the chapter's own title, already the unit's heading
            return
        while self.trail and self.trail[-1][0] >= level:
            self.trail.pop()
        self.trail.append((level, title))
        self.block(title)
        self._mark(self.size - len(title))

    def block(self, text: str) -> None:
        """A paragraph, a table row or a list item: kept on lines of its own."""
        text = "\n".join(ln.strip() for ln in text.strip().splitlines() if ln.strip())
        if not text:
            return
        if self.parts:
            self.parts.append("\n\n")
            self.size += 2
        self.parts.append(text)
        self.size += len(text)

    def page(self, number: int) -> PdfPage:
        from core.vault.pdf import PdfPage

        if not self.sections:
            self.sections.append((0, self.top))
        return PdfPage(number, "".join(self.parts), tuple(self.sections))

    def _mark(self, offset: int) -> None:
        path = HEADING_JOIN.join([t for t in [self.top] if t] + [t for _, t in self.trail])
        if not self.sections and offset > 0:
            self.sections.append((0, self.top))
        if self.sections and self.sections[-1][0] == offset:
            self.sections[-1] = (offset, path)
        else:
            self.sections.append((offset, path))

    @property
    def empty(self) -> bool:
        return not self.parts


def check_zip(path: Path, what: str) -> zipfile.ZipFile:
    """Open a zip-based document, refusing a truncated file or a zip bomb before unpacking.

    The sizes are the ones the archive declares; `zipfile` never inflates a member past its
    declared size, so checking them bounds what reading can cost.
    """
    import zipfile

    from core.vault.pdf import PdfProblem

    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        head = path.open("rb").read(8)
        if head.startswith(b"\xd0\xcf\x11\xe0"):  # an OLE container: how Office saves a password-protected file
            raise PdfProblem("encrypted", f"the {what} is protected by a password (or is an old binary format)") from None
        raise PdfProblem("malformed", f"the {what} is not a readable zip archive (truncated or damaged?)") from None
    total = 0
    for info in archive.infolist():
        total += info.file_size
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            archive.close()
            raise PdfProblem("too_large", f"{info.filename} unpacks {info.file_size // max(info.compress_size, 1):,} times its size (a zip bomb?)")
    if total > MAX_UNPACKED_BYTES:
        archive.close()
        raise PdfProblem("too_large", f"the {what} unpacks to {total:,} bytes, over the {MAX_UNPACKED_BYTES:,}-byte limit")
    return archive
