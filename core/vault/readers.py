"""Which reader takes a file of each kind out: the dispatch the extraction child runs.

Apart from `core.vault.kinds` (which every reader imports for its shapes) so that no module
imports a reader that imports it back.
"""

from __future__ import annotations

from pathlib import Path

from core.vault.kinds import KindText
from core.vault.pdf import PdfProblem

OCR = {"on": False}  # set in the extraction child: images are read, and scanned PDFs by OCR too


def extract(kind: str, path: Path) -> KindText:
    """Read a file of `kind` (a `core.vault.kinds` name other than `txt`)."""
    # Imported here: each reader loads its library only in the child that reads that kind.
    from core.vault import chat_text, docx_text, epub_text, html_text, mail_text, ocr_text

    readers = {
        "pdf": read_pdf,
        "docx": docx_text.extract_docx,
        "epub": epub_text.extract_epub,
        "html": html_text.extract_html,
        "email": mail_text.extract_mail,
        "chat": chat_text.extract_chat,
        "image": ocr_text.extract_image,
    }
    return readers[kind](path)


def extract_ocr(path: Path, first: int = 1, count: int | None = None, pages_dir: Path | None = None) -> KindText:
    """An image, or `count` pages of a scanned PDF from page `first`, by OCR (the OCR stage's request)."""
    from core.vault import ocr_text

    if path.suffix.lower() == ".pdf":
        return ocr_text.ocr_pdf(path, first, count or ocr_text.PORTION_PAGES, pages_dir)
    return ocr_text.extract_image(path)


def read_pdf(path: Path) -> KindText:
    from core.vault.pdf import extract_pdf

    try:
        got = extract_pdf(path)
    except PdfProblem as exc:
        if exc.reason != "no_text" or not OCR["on"]:
            raise
        from core.vault.ocr_text import ocr_pdf

        return ocr_pdf(path)  # a scan: its text by OCR
    return KindText(got.title, got.pages, got.dropped_lines)
