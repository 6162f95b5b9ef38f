"""What an OCR stage did, and which files it reads: apart from `core.index.ocr_pass` so a sync
with OCR switched off (the default) reports its stage without importing the OCR side (the PDF
reader's module, the OCR store: ~20 ms of a cold `cairn index`, issue #30)."""

from __future__ import annotations

from dataclasses import dataclass

from core.vault.kinds import attachment_kind


@dataclass(frozen=True, slots=True)
class OcrStats:
    """What one OCR stage did."""

    vault: str
    read: tuple[str, ...] = ()  # files whose text (or a further portion of it) went into the index
    pages: int = 0  # pages read by OCR in this stage (an image is one)
    skipped: int = 0  # files OCR could not read (the reason is in Index health)
    remaining: int = 0  # files with pages still to read (the stage was cancelled)
    cancelled: bool = False
    seconds: float = 0.0


def is_ocr_kind(rel_path: str) -> bool:
    """Images are read only by OCR; a PDF may be a scan."""
    return attachment_kind(rel_path) in ("image", "pdf")
