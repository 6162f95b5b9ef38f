"""Files other than notes that people keep in a vault: PDFs, Word, e-books, web pages, mail, chat exports, plain text.

An attachment becomes a `Document` like a note, so it is searched, embedded,
cited and watched by the same machinery. Its chunks never cross a unit (a PDF's page,
an e-book's chapter, a mailbox's message, an export's conversation; see
`core.vault.kinds`), carry the unit's number, and take the unit's headings as heading
path. Offsets of an extracted file's chunks index its *extracted* text (the units joined
by blank lines), not the file's bytes; `document_version` is still the hash of the file, so a changed PDF
is noticed like a changed note.

Confidentiality: an attachment has no front matter, so it takes its level from the
nearest `.cairn.yaml` in its folder or a folder above it (`confidentiality:
restricted`). A folder setting is the one rule that needs no link graph, survives
renames of the notes around it, and works for a PDF nothing links to. Notes keep
their own front matter and are not affected.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from core.base.confidentiality import Confidentiality
from core.base.models import Chunk, Document, FileWarning, SkippedFile, SkipReason
from core.vault.chunker import ChunkLimits, chunk_plain_range
from core.vault.kinds import KIND_BY_NAME, KindText, attachment_kind

if TYPE_CHECKING:  # the extractor (multiprocessing) and the PDF module load with the first PDF, not with a search
    from core.vault.extract_ahead import ExtractAhead
    from core.vault.extractor import PdfExtractor

FOLDER_SETTINGS = ".cairn.yaml"
MAX_ATTACHMENT_CHUNKS = 20_000  # a 3,000-page manual makes ~10,000 chunks; notes keep their own cap
PAGE_JOIN = "\n\n"
_HASH_BLOCK = 1 << 20


def read_in_child(rel_path: str) -> bool:
    """Whether an attachment's text is taken out in the extractor's child (text files and canvases are read here)."""
    return attachment_kind(rel_path) not in (None, "txt", "canvas")


def file_version(path: Path) -> str:
    """sha256 of the file, read in blocks: a 200 MB PDF is never held in memory to hash it."""
    import hashlib  # here: a vault of notes only never loads OpenSSL (`core.base.digest`)

    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


class FolderSettings:
    """`.cairn.yaml` files read once per sync: folder -> confidentiality (nearest one wins)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._levels: dict[str, str | None] = {}

    def confidentiality(self, rel_path: str) -> str:
        folder = rel_path.rpartition("/")[0]
        while True:
            level = self._level(folder)
            if level is not None:
                return level
            if not folder:
                return "internal"
            folder = folder.rpartition("/")[0]

    def _level(self, folder: str) -> str | None:
        if folder not in self._levels:
            self._levels[folder] = _read_level(self.root / folder / FOLDER_SETTINGS if folder else self.root / FOLDER_SETTINGS)
        return self._levels[folder]


def _read_level(path: Path) -> str | None:
    try:
        text = path.read_text("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError:
        return Confidentiality.RESTRICTED  # a settings file that cannot be read fails closed
    import yaml  # only for a settings file that exists: most folders have none (~20 ms of a cold index)

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return Confidentiality.RESTRICTED
    if not isinstance(data, dict) or data.get("confidentiality") in (None, ""):
        return None
    return Confidentiality.parse(data["confidentiality"])  # an unknown level fails closed


@dataclass(frozen=True, slots=True)
class AttachmentSource:
    """What the indexer knows of the file before its text is taken out."""

    vault: str
    rel_path: str
    path: Path
    size: int
    mtime_ns: int
    version: str
    confidentiality: str


class AttachmentReading:
    """What one pass over files shares: folder settings, the cancel flag, and the PDF
    extractor's child process (started on the first PDF only, stopped when the pass ends)."""

    def __init__(self, root: Path, seconds: float, cancel: threading.Event | None = None, *, ocr: bool = False) -> None:
        self.settings = FolderSettings(root)
        self.cancel = cancel
        self._seconds = seconds
        self._ocr = ocr
        self._extractor: PdfExtractor | None = None
        self._ahead: ExtractAhead | None = None

    @property
    def extractor(self) -> PdfExtractor:
        if self._extractor is None:
            from core.vault.extractor import PdfExtractor

            self._extractor = PdfExtractor(self._seconds, ocr=self._ocr)
        return self._extractor

    def extract_ahead(self, files: Sequence[tuple[Path, int]]) -> None:
        """Start taking these (path, size) files' text out now, in the order they will be read
        (`core.vault.extract_ahead`): the notes are indexed meanwhile. Not where the extractor
        has no child (a daemonic process): there it would only compete for the GIL."""
        if self._ahead is not None or not files or not self.extractor.isolate:
            return
        from core.vault.extract_ahead import ExtractAhead

        self._ahead = ExtractAhead(lambda: self.extractor)
        self._ahead.start(files)

    def read(
        self,
        vault: str,
        rel_path: str,
        path: Path,
        size: int,
        mtime_ns: int,
        indexed: tuple[str, str] | None,
        limits: ChunkLimits,
        text_max_bytes: int,
    ) -> Document | SkippedFile | None:
        """The attachment as a `Document`, why it cannot be one, or None when `indexed`
        (version, confidentiality) says the index holds it as it is: same bytes (by hash, read
        in blocks) and same folder setting — then the PDF is not parsed at all."""
        try:
            version = file_version(path)
        except FileNotFoundError:
            return SkippedFile(rel_path, SkipReason.UNREADABLE, "file vanished while it was being read")
        except OSError as exc:
            return SkippedFile(rel_path, SkipReason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
        level = self.settings.confidentiality(rel_path)
        if indexed == (version, level):
            return None
        src = AttachmentSource(vault, rel_path, path, size, mtime_ns, version, level)
        return parse_attachment(src, self._ahead or self.extractor, limits, text_max_bytes, self.cancel)

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()
            self._ahead = None
        if self._extractor is not None:
            self._extractor.close()
            self._extractor = None

    def __enter__(self) -> AttachmentReading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_attachment(
    src: AttachmentSource,
    extractor: PdfExtractor | ExtractAhead,
    limits: ChunkLimits = ChunkLimits(),
    text_max_bytes: int = 10 * 1024 * 1024,
    cancel: threading.Event | None = None,
) -> Document | SkippedFile:
    """Turn an attachment into a `Document`, or say why it cannot be indexed."""
    kind = attachment_kind(src.rel_path)
    if kind not in ("txt", "canvas"):  # text and canvases are read here; the rest in the extraction child
        from core.vault.extractor import ExtractionFailure

        got = extractor.extract(src.path, cancel)
        if isinstance(got, ExtractionFailure):
            return SkippedFile(src.rel_path, SkipReason(got.reason), got.detail)
        return units_document(src, got, limits)
    try:
        with src.path.open("rb") as fh:
            raw = fh.read(text_max_bytes + 1)
    except OSError as exc:
        return SkippedFile(src.rel_path, SkipReason.UNREADABLE, f"cannot read file: {exc.strerror or exc}")
    if len(raw) > text_max_bytes:
        return SkippedFile(src.rel_path, SkipReason.TOO_LARGE, f"over the {text_max_bytes:,}-byte limit")
    if b"\x00" in raw:
        return SkippedFile(src.rel_path, SkipReason.BINARY, "file contains NUL bytes; it is not text")
    if kind == "canvas":
        return canvas_document(src, raw, limits)
    return text_document(src, raw, limits)


def canvas_document(src: AttachmentSource, raw: bytes, limits: ChunkLimits = ChunkLimits()) -> Document:
    """A canvas's cards as text (`core.vault.canvas`); its file cards are its links."""
    from core.vault.canvas import canvas_chunks, read_canvas

    depth = len(PurePosixPath(src.rel_path).parts)
    canvas = read_canvas(raw, src.path.parents[depth - 1] if depth else None)
    chunks, _ = canvas_chunks(canvas, limits)
    warnings = [FileWarning(src.rel_path, "canvas", p) for p in canvas.problems[:20]]
    return replace(_document(src, None, chunks, warnings), links=canvas.links)


def units_document(src: AttachmentSource, pdf: KindText, limits: ChunkLimits = ChunkLimits()) -> Document:
    """Chunk the units of an extracted file; every chunk knows its unit (page) and heading trail."""
    encoded = [p.text.encode("utf-8") for p in pdf.pages]
    raw = PAGE_JOIN.encode().join(encoded)
    chunks: list[Chunk] = []
    offset = 0
    for page, data in zip(pdf.pages, encoded):
        bounds = [_byte_offset(page.text, at) for at, _ in page.sections] + [len(data)]
        for (_, heading), start, end in zip(page.sections, bounds, bounds[1:]):
            for c in chunk_plain_range(raw, offset + start, offset + end, heading, limits):
                chunks.append(Chunk(len(chunks), c.heading_path, c.start_byte, c.end_byte, c.text, page.number))
        offset += len(data) + len(PAGE_JOIN)
    warnings = [FileWarning(src.rel_path, "partly_read", note) for note in pdf.notes]
    return _document(src, pdf.title, chunks, warnings, pdf.date)


def text_document(src: AttachmentSource, raw: bytes, limits: ChunkLimits = ChunkLimits()) -> Document:
    """A `.txt` file: chunks at lines and sentences; offsets are the file's own bytes."""
    warnings: list[FileWarning] = []
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        warnings.append(FileWarning(src.rel_path, "invalid_utf8", f"invalid UTF-8 at byte {exc.start}; decoded with replacement characters"))
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    chunks = chunk_plain_range(raw, start, len(raw), "", limits)
    return _document(src, None, chunks, warnings)


def _document(
    src: AttachmentSource, title: str | None, chunks: list[Chunk], warnings: list[FileWarning], date: str | None = None
) -> Document:
    if len(chunks) > MAX_ATTACHMENT_CHUNKS:
        warnings.append(FileWarning(src.rel_path, "too_many_chunks", f"only the first {MAX_ATTACHMENT_CHUNKS} chunks are indexed"))
        chunks = chunks[:MAX_ATTACHMENT_CHUNKS]
    return Document(
        vault=src.vault,
        rel_path=src.rel_path,
        document_version=src.version,
        size=src.size,
        mtime_ns=src.mtime_ns,
        title=title or PurePosixPath(src.rel_path).stem,
        tags=(),
        date=date,
        doc_type=attachment_kind(src.rel_path),
        project=None,
        confidentiality=src.confidentiality,
        aliases=(),
        chunks=tuple(chunks),
        warnings=tuple(warnings),
    )


def _byte_offset(text: str, char_offset: int) -> int:
    return len(text[:char_offset].encode("utf-8"))


@dataclass(frozen=True, slots=True)
class AttachmentCount:
    """How many attachments of one kind are indexed, and how many were skipped for each reason."""

    kind: str  # a `core.vault.kinds` name: pdf, txt, docx, epub, html, email, chat
    indexed: int
    skipped: tuple[tuple[str, int], ...]  # (reason, count), most frequent first

    @property
    def skipped_total(self) -> int:
        return sum(n for _, n in self.skipped)


def count_attachments(indexed: Iterable[str], skipped: Iterable[SkippedFile]) -> tuple[AttachmentCount, ...]:
    """Attachments counted apart from notes, per kind (for `cairn status` and Index health)."""
    done: Counter[str] = Counter(k for k in map(attachment_kind, indexed) if k)
    reasons: dict[str, Counter[str]] = {}
    for s in skipped:
        kind = attachment_kind(s.rel_path)
        if kind:
            reasons.setdefault(kind, Counter())[s.reason.value] += 1
    return tuple(
        AttachmentCount(kind, done[kind], tuple(reasons.get(kind, Counter()).most_common()))
        for kind in KIND_BY_NAME
        if done[kind] or kind in reasons
    )


def describe_attachments(counts: Iterable[AttachmentCount]) -> str:
    """'3 PDFs indexed, 2 skipped (encrypted 1, no_text 1); 1 text file indexed' — '' without any."""
    parts = []
    for c in counts:
        one, many = KIND_BY_NAME[c.kind].label
        text = f"{c.indexed} {one if c.indexed == 1 else many} indexed"
        if c.skipped:
            text += f", {c.skipped_total} skipped (" + ", ".join(f"{r} {n}" for r, n in c.skipped) + ")"
        parts.append(text)
    return "; ".join(parts)
