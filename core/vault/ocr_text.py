"""Text in images and scanned PDFs by OCR: opt-in, offline, through rapidocr-onnxruntime.

rapidocr-onnxruntime 1.4.4 carries PaddleOCR's PP-OCRv4 detection and recognition models
and the v2 direction classifier as ONNX files inside its wheel (Chinese and English), and
runs them on the onnxruntime Cairn already uses: nothing is downloaded at run time. It is
the optional `ocr` extra (`pip install 'cairn-notes[ocr]'`), not part of the double-click
build: it pulls OpenCV, shapely, pyclipper and Pillow. The switch is the "image" kind in
Settings › Files (off unless turned on); with it on, PDFs without a text layer are read by
OCR too.

OCR runs in the extraction child like every reader, which lowers its own priority to the
lowest (`os.nice(19)`) the first time it recognises anything, so the app and the indexing
of notes keep the cores; and it runs in a pass of its own after the notes are keyword-indexed
and embedded (`core.index.ocr_pass`). Each recognised line keeps its box, so the Preview
can mark where the query's words are on the image. An image's header is read first: one over `MAX_PIXELS` (a
30,000 × 30,000 "image" of a few KB) is skipped as `too_large` before it is decoded.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from core.vault.kinds import KindText, OcrLine, OcrPage, UnitBuilder
from core.vault.pdf import PdfPage, PdfProblem

MAX_PIXELS = 40_000_000  # a 40-megapixel photo; more is a decompression bomb or a poster nobody reads
PORTION_PAGES = 30  # a scanned PDF's pages read by one OCR request (~5 s a page on a loaded 2-core machine)
PDF_SCALE = 2.0  # render scale for a scanned page (144 dpi): small print stays legible
PAGE_IMAGE_SCALE = 0.5  # a scanned page's picture for the Preview: half the OCR render (72 dpi), JPEG
_state: dict[str, Any] = {}


def ocr_installed() -> bool:
    """Whether the `ocr` extra is installed (the Files page offers the switch only then)."""
    return importlib.util.find_spec("rapidocr_onnxruntime") is not None


def extract_image(path: Path) -> KindText:
    """The text OCR finds in a PNG, JPEG or WebP image. Raises `PdfProblem` when there is none."""
    try:
        from PIL import Image
    except ImportError:
        raise PdfProblem("no_text", "text in images needs the ocr extra: pip install 'cairn-notes[ocr]'") from None
    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    try:
        with Image.open(path) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise PdfProblem("too_large", f"{width:,} × {height:,} pixels is over the {MAX_PIXELS:,}-pixel limit")
            pixels = _bgr(image.convert("RGB"))
    except Image.DecompressionBombError as exc:  # Pillow's own check fires first on twice our limit
        raise PdfProblem("too_large", f"over the {MAX_PIXELS:,}-pixel limit ({exc})") from None
    except (Image.UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise PdfProblem("malformed", f"not an image Pillow can read ({exc})") from None
    lines = recognise(pixels)
    if not lines:
        raise PdfProblem("no_text", "OCR found no text in the image")
    page = OcrPage(1, width, height, tuple(lines))
    out = UnitBuilder()
    out.block(page.text)
    return KindText(None, (out.page(1),), ocr=(page,), unit_count=1)


def ocr_pdf(path: Path, first: int = 1, count: int = PORTION_PAGES, pages_dir: Path | None = None) -> KindText:
    """Pages `first` .. `first + count - 1` of a scanned PDF by OCR, one unit per page with text.

    A long scan is read in portions, one request each, so a pass can stop between them and
    the next pass goes on where it stopped (`core.index.ocr_pass`). With `pages_dir`, each
    page's picture is saved there as `p<n>.jpg` for the Preview (in the index's folder,
    never in the vault). `unit_count` is the file's page count.
    """
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    pages: list[PdfPage] = []
    read: list[OcrPage] = []
    try:
        total = len(pdf)
        last = min(total, first + count - 1)
        for i in range(first - 1, last):
            page = pdf[i]
            try:
                bitmap = page.render(scale=PDF_SCALE)
                pixels = bitmap.to_numpy()[:, :, :3]  # PDFium renders BGR(x), what OpenCV expects
                lines = recognise(pixels)
                if pages_dir is not None:
                    _save_page_image(pixels, pages_dir / f"p{i + 1}.jpg")
            finally:
                page.close()
            if lines:
                got = OcrPage(i + 1, pixels.shape[1], pixels.shape[0], tuple(lines))
                read.append(got)
                pages.append(PdfPage(i + 1, got.text))
    finally:
        pdf.close()
    notes = (f"OCR read pages {first}–{last} of {total}",) if first > 1 or last < total else ()
    if not pages and first == 1 and last >= total:
        raise PdfProblem("no_text", "the PDF has no text layer and OCR found no text in it")
    return KindText(None, tuple(pages), notes=notes, ocr=tuple(read), unit_count=total)


def recognise(pixels: Any) -> list[OcrLine]:
    """Lines of text in a BGR pixel array, top to bottom: boxes on one line joined by spaces,
    the line's box around them all."""
    result, _ = _engine()(pixels)
    boxes = []
    for box, text, _score in result or []:
        xs, ys = [float(p[0]) for p in box], [float(p[1]) for p in box]
        if str(text).strip():
            boxes.append((min(ys), max(ys), min(xs), max(xs), str(text).strip()))
    boxes.sort()
    lines: list[list[tuple[float, float, float, float, str]]] = []
    bottom = -1.0
    for top, low, left, right, text in boxes:
        if lines and top < bottom - (low - top) / 2:  # overlaps the line above by more than half: same line
            lines[-1].append((left, top, right, low, text))
            bottom = max(bottom, low)
        else:
            lines.append([(left, top, right, low, text)])
            bottom = low
    return [_line(sorted(parts)) for parts in lines]


def _line(parts: list[tuple[float, float, float, float, str]]) -> OcrLine:
    box = (min(p[0] for p in parts), min(p[1] for p in parts), max(p[2] for p in parts), max(p[3] for p in parts))
    return OcrLine(" ".join(p[4] for p in parts), tuple(round(v, 1) for v in box))  # type: ignore[arg-type]


def _save_page_image(pixels: Any, target: Path) -> None:
    from PIL import Image

    image = Image.fromarray(pixels[:, :, ::-1].copy())  # BGR -> RGB
    small = image.resize((max(1, int(image.width * PAGE_IMAGE_SCALE)), max(1, int(image.height * PAGE_IMAGE_SCALE))))
    target.parent.mkdir(parents=True, exist_ok=True)
    small.save(target, "JPEG", quality=70)


def _engine() -> Any:
    if "engine" not in _state:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise PdfProblem("no_text", "OCR needs the ocr extra: pip install 'cairn-notes[ocr]'") from None
        _lowest_priority()
        _state["engine"] = RapidOCR()
    return _state["engine"]


def _lowest_priority() -> None:
    """This child only reads files: OCR gives the cores to everything else (nice 19; on Windows,
    which has no `os.nice`, the idle priority class)."""
    if hasattr(os, "nice"):
        os.nice(19)
    elif sys.platform == "win32":
        import ctypes

        idle_priority_class = 0x40
        kernel32 = ctypes.windll.kernel32
        kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), idle_priority_class)


def _bgr(image: Any) -> Any:
    import numpy as np

    return np.asarray(image)[:, :, ::-1]
