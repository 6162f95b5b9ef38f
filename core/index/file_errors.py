"""The per-file error boundary's records: whatever goes wrong with one note becomes a skip
with a reason the user can read in `cairn status` and Index health, never an aborted index."""

from __future__ import annotations

from core.base.models import Document, SkippedFile, SkipReason
from core.vault.scanner import printable_name


class SkipDecided(Exception):
    """Carries a skip decided on the way (unreadable, binary ...) out of the error boundary."""

    def __init__(self, skipped: SkippedFile) -> None:
        super().__init__(skipped.detail)
        self.skipped = skipped


def parse_error(rel_path: str, exc: BaseException) -> SkippedFile:
    """The skip record for an unforeseen failure on one note: the user sees what went wrong."""
    detail = str(exc).splitlines()[0][:300] if str(exc) else ""
    what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return SkippedFile(printable_name(rel_path), SkipReason.PARSE_ERROR, f"could not be indexed ({what})")


def check_storable(doc: Document) -> None:
    """Raise now, inside the per-file boundary, for text the index or the JSON files could not
    store (a lone surrogate slipped through), instead of failing the whole batch's commit."""
    for text in (doc.rel_path, doc.title, *doc.tags, *doc.aliases, *(c.text for c in doc.chunks), *(c.heading_path for c in doc.chunks)):
        text.encode("utf-8")
