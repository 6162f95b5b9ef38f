"""The Preview's picture of an image or a scanned page, with the query's words marked where OCR found them.

A result in a screenshot or a scan is text OCR recognised (`core.vault.ocr_text`); a person
remembers the picture, so the Preview shows it above the recognised text, with a box around
each line that holds a word of the query. The lines and their boxes come from the index
folder (`core.index.ocr_store`), not from running OCR again; an image is read from the vault
(read-only), a scanned page's picture from the index folder (PDFium never runs on the UI thread).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QRectF, Qt, QUrl
from PySide6.QtGui import QColor, QImage, QImageReader, QPainter, QPen, QTextCursor, QTextDocument, QTextImageFormat

from core.base.models import Hit
from core.index.ocr_store import OcrStore, matching_lines
from core.vault.attachments import attachment_kind
from core.vault.kinds import OcrPage
from desktop.actions import note_path
from desktop.controller import AppController

PICTURE_URL = QUrl("cairn-ocr:picture")
MARK_FILL = QColor(255, 196, 0, 90)  # a highlighter's yellow, see-through: the words stay readable
MARK_EDGE = QColor(230, 110, 0)
MAX_PICTURE_PIXELS = 40_000_000  # as OCR's own limit: a larger "image" was never read


@dataclass(frozen=True, slots=True)
class OcrPicture:
    """What is on screen: the picture with its marks, and the marked lines' boxes in the page's pixels."""

    image: QImage
    marks: tuple[QRectF, ...]
    lines: tuple[str, ...]


class OcrOverlay:
    """Puts the picture of an OCR'd result at the top of the Preview's document."""

    def __init__(self, controller: AppController) -> None:
        self._controller = controller
        self.shown: OcrPicture | None = None

    def marking(self, hit: Hit) -> bytes:
        """What decides the marks besides the text: the query, for a hit in an image or a PDF
        (the Preview shows the same page again when only the query changed)."""
        response = self._controller.response
        if attachment_kind(hit.chunk.rel_path) not in ("image", "pdf") or response is None:
            return b""
        return b"\0" + response.query.encode("utf-8")

    def insert(self, doc: QTextDocument, hit: Hit, root: str, room: int) -> bool:
        """Insert the picture above the text when `hit` is in an image or a scanned page (whether it did).
        The text below is then not marked: the picture's boxes say where the words are."""
        self.shown = None
        if hit.page is None or attachment_kind(hit.chunk.rel_path) not in ("image", "pdf"):
            return False
        try:
            store = OcrStore(self._controller.engine.index_for(hit.chunk.vault).dir)
        except Exception:  # noqa: BLE001 - the index may be rebuilding: the text alone is shown
            return False
        record = store.get(hit.chunk.rel_path)
        page = next((p for p in record.pages if p.number == hit.page), None) if record is not None else None
        if page is None:
            return False  # not read by OCR (a PDF with a text layer)
        source = (
            note_path(root, hit.chunk.rel_path)
            if attachment_kind(hit.chunk.rel_path) == "image"
            else store.page_image(hit.chunk.rel_path, hit.page)
        )
        response = self._controller.response
        picture = marked_picture(source, page, response.query if response is not None else "", room)
        if picture is None:
            return False
        self.shown = picture
        doc.addResource(QTextDocument.ResourceType.ImageResource.value, PICTURE_URL, picture.image)
        image = QTextImageFormat()
        image.setName(PICTURE_URL.toString())
        image.setWidth(picture.image.width())
        image.setHeight(picture.image.height())
        cursor = QTextCursor(doc)
        cursor.setPosition(0)
        cursor.insertImage(image)
        cursor.insertBlock()
        return True


def marked_picture(source: Path | None, page: OcrPage, query: str, room: int) -> OcrPicture | None:
    """The picture scaled to `room` pixels wide at most, with the lines matching `query` boxed."""
    if source is None:
        return None
    reader = QImageReader(str(source))
    size = reader.size()
    if not size.isValid() or size.width() * size.height() > MAX_PICTURE_PIXELS:
        return None
    image = reader.read()
    if image.isNull():
        return None
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    scale = image.width() / max(1, page.width)  # a scan's saved picture is smaller than the page OCR read
    lines = matching_lines(page, query)
    marks = tuple(QRectF(x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in (line.box for line in lines))
    painter = QPainter(image)
    painter.setPen(QPen(MARK_EDGE, max(2.0, 3 * scale)))
    for rect in marks:
        pad = 4 * scale
        on_image = QRectF(
            rect.x() * scale - pad,
            rect.y() * scale - pad,
            rect.width() * scale + 2 * pad,
            rect.height() * scale + 2 * pad,
        )
        painter.fillRect(on_image, MARK_FILL)
        painter.drawRect(on_image)
    painter.end()
    if image.width() > room > 0:
        image = image.scaledToWidth(room, Qt.TransformationMode.SmoothTransformation)
    return OcrPicture(image, marks, tuple(line.text for line in lines))
