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
of notes keep the cores. An image's header is read first: one over `MAX_PIXELS` (a
30,000 × 30,000 "image" of a few KB) is skipped as `too_large` before it is decoded.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

from core.vault.kinds import KindText, UnitBuilder
from core.vault.pdf import PdfPage, PdfProblem

MAX_PIXELS = 40_000_000  # a 40-megapixel photo; more is a decompression bomb or a poster nobody reads
MAX_OCR_PAGES = 30  # a scanned PDF's pages read by OCR (~5 s a page on a loaded 2-core machine)
PDF_SCALE = 2.0  # render scale for a scanned page (144 dpi): small print stays legible
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
    out = UnitBuilder()
    out.block("\n".join(lines))
    return KindText(None, (out.page(1),))


def ocr_pdf(path: Path) -> KindText:
    """A scanned PDF's pages by OCR (the first `MAX_OCR_PAGES`), one unit per page."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    pages: list[PdfPage] = []
    notes: list[str] = []
    try:
        count = len(pdf)
        if count > MAX_OCR_PAGES:
            notes.append(f"only the first {MAX_OCR_PAGES} of {count} scanned pages were read by OCR")
        for i in range(min(count, MAX_OCR_PAGES)):
            page = pdf[i]
            try:
                bitmap = page.render(scale=PDF_SCALE)
                pixels = bitmap.to_numpy()[:, :, :3]  # PDFium renders BGR(x), what OpenCV expects
                lines = recognise(pixels)
            finally:
                page.close()
            if lines:
                pages.append(PdfPage(i + 1, "\n".join(lines)))
    finally:
        pdf.close()
    if not pages:
        raise PdfProblem("no_text", "the PDF has no text layer and OCR found no text in it")
    return KindText(None, tuple(pages), notes=tuple(notes))


def recognise(pixels: Any) -> list[str]:
    """Lines of text in a BGR pixel array, top to bottom; boxes on one line joined by spaces."""
    result, _ = _engine()(pixels)
    boxes = []
    for box, text, _score in result or []:
        ys = [p[1] for p in box]
        boxes.append((min(ys), max(ys), min(p[0] for p in box), str(text).strip()))
    boxes.sort()
    lines: list[list[tuple[float, str]]] = []
    bottom = -1.0
    for top, low, left, text in boxes:
        if lines and top < bottom - (low - top) / 2:  # overlaps the line above by more than half: same line
            lines[-1].append((left, text))
            bottom = max(bottom, low)
        else:
            lines.append([(left, text)])
            bottom = low
    return [" ".join(t for _, t in sorted(line) if t) for line in lines]


def _engine() -> Any:
    if "engine" not in _state:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise PdfProblem("no_text", "OCR needs the ocr extra: pip install 'cairn-notes[ocr]'") from None
        if hasattr(os, "nice"):
            os.nice(19)  # this child only reads files: OCR gives the cores to everything else
        _state["engine"] = RapidOCR()
    return _state["engine"]


def _bgr(image: Any) -> Any:
    import numpy as np

    return np.asarray(image)[:, :, ::-1]
