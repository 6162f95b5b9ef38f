"""What OCR read of each image and scanned PDF, kept in the vault's index folder (never the vault).

One JSON file per source file (`ocr/<hash of its path>.json`) holds the lines OCR recognised
on each page with their boxes, the file's hash (`version`) and how far OCR got. It serves
three ends:

- **Resuming**: a scanned PDF is read in portions (`core.vault.ocr_text.PORTION_PAGES`); the
  record says where the next portion starts, so a cancelled pass, a quit app or a long scan
  goes on where it stopped. A file whose hash is unchanged is never read by OCR again, also
  when only its folder's confidentiality changed and it must be indexed anew.
- **The Preview**: the boxes of the lines holding the query's words are drawn over the image.
  A scanned page's picture is saved beside the record (`ocr/<hash>/p<n>.jpg`), since the
  Preview never runs PDFium on the UI thread.
- **Index health**: a file OCR could not read keeps its reason (no text, too large), so the
  next pass does not try again and still reports it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from core.base.atomic import make_private, read_json, write_json_atomic
from core.vault.kinds import OcrLine, OcrPage

OCR_FOLDER = "ocr"
_WORD = re.compile(r"\w+", re.UNICODE)
_MIN_WORD = 2  # one letter matches nearly every line


@dataclass(frozen=True, slots=True)
class OcrRecord:
    """One file as OCR has read it so far."""

    rel_path: str
    version: str  # sha256 of the file the pages were read from
    unit_count: int  # pages in the file (1 for an image); 0 before the first portion
    read_to: int  # the last page read (pages without text count as read)
    pages: tuple[OcrPage, ...]  # pages with text, in order
    problem: tuple[str, str] | None = None  # (skip reason, detail) when OCR could not read the file

    @property
    def complete(self) -> bool:
        return self.problem is not None or (self.unit_count > 0 and self.read_to >= self.unit_count)

    def with_portion(self, pages: tuple[OcrPage, ...], unit_count: int, read_to: int) -> OcrRecord:
        known = {p.number for p in pages}
        merged = sorted([p for p in self.pages if p.number not in known] + list(pages), key=lambda p: p.number)
        return replace(self, pages=tuple(merged), unit_count=unit_count, read_to=max(self.read_to, read_to))


class OcrStore:
    """The `ocr/` folder of one vault's index."""

    def __init__(self, index_dir: Path) -> None:
        self.folder = Path(index_dir) / OCR_FOLDER

    def _path(self, rel_path: str) -> Path:
        return self.folder / f"{hashlib.sha256(rel_path.encode('utf-8')).hexdigest()[:32]}.json"

    def pages_dir(self, rel_path: str) -> Path:
        """Where a scanned PDF's page pictures go (`p<n>.jpg`)."""
        return self._path(rel_path).with_suffix("")

    def get(self, rel_path: str, version: str | None = None) -> OcrRecord | None:
        """The record of `rel_path` (of that `version` when given); None when there is none or it is damaged."""
        try:
            data = read_json(self._path(rel_path))
            record = _from_json(data)
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None
        if record.rel_path != rel_path or (version is not None and record.version != version):
            return None
        return record

    def put(self, record: OcrRecord) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        make_private(self.folder)
        path = self._path(record.rel_path)
        write_json_atomic(path, _to_json(record), compact=True)
        make_private(path)

    def drop(self, rel_path: str) -> None:
        """Forget a file (it changed or is gone): its record and its page pictures."""
        self._path(rel_path).unlink(missing_ok=True)
        shutil.rmtree(self.pages_dir(rel_path), ignore_errors=True)

    def page_image(self, rel_path: str, page: int) -> Path | None:
        """The saved picture of a scanned page, if there is one."""
        path = self.pages_dir(rel_path) / f"p{page}.jpg"
        return path if path.is_file() else None


def query_words(query: str) -> tuple[str, ...]:
    """The words of a typed query worth finding on an image: no operators (`tag:x`), no negations."""
    words: list[str] = []
    for token in query.split():
        if ":" in token or token.startswith("-"):
            continue
        words.extend(w.lower() for w in _WORD.findall(token) if len(w) >= _MIN_WORD or not w.isascii())
    return tuple(dict.fromkeys(words))


def matching_lines(page: OcrPage, query: str) -> tuple[OcrLine, ...]:
    """The lines of `page` that hold a word of `query` (as a word's start, so "okapi" finds
    "okapis"; CJK anywhere in the line, since it has no spaces)."""
    words = query_words(query)
    if not words:
        return ()
    found = []
    for line in page.lines:
        text = line.text.lower()
        starts = {w for w in _WORD.findall(text)}
        if any((not w.isascii() and w in text) or any(s.startswith(w) for s in starts) for w in words):
            found.append(line)
    return tuple(found)


def _to_json(record: OcrRecord) -> dict[str, object]:
    return {
        "rel_path": record.rel_path,
        "version": record.version,
        "unit_count": record.unit_count,
        "read_to": record.read_to,
        "problem": list(record.problem) if record.problem else None,
        "pages": [[p.number, p.width, p.height, [[line.text, *line.box] for line in p.lines]] for p in record.pages],
    }


def _from_json(data: dict[str, object]) -> OcrRecord:
    pages = tuple(
        OcrPage(
            int(n),
            int(w),
            int(h),
            tuple(OcrLine(str(t), (float(x0), float(y0), float(x1), float(y1))) for t, x0, y0, x1, y1 in lines),
        )
        for n, w, h, lines in data["pages"]  # type: ignore[attr-defined]
    )
    problem = data.get("problem")
    return OcrRecord(
        str(data["rel_path"]),
        str(data["version"]),
        int(data["unit_count"]),  # type: ignore[call-overload]
        int(data["read_to"]),  # type: ignore[call-overload]
        pages,
        (str(problem[0]), str(problem[1])) if isinstance(problem, list) else None,
    )


__all__ = ["OCR_FOLDER", "OcrRecord", "OcrStore", "matching_lines", "query_words"]
