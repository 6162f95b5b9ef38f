"""The Preview's document: a note's markdown as safe HTML (`core.vault.render_html`) in a QTextDocument.

Qt's own markdown importer knows no callouts, highlights or Obsidian embeds and underlines
`_emphasis_`; the one Obsidian rendering is used instead, and what Qt's rich text needs on
top (code that wraps, images no wider than the view) is set here.
"""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QPixmap, QTextCursor, QTextDocument

from core.vault.render_html import render_html

#: Qt's rich text takes CSS for what the HTML cannot say: code wraps instead of scrolling sideways,
#: on a tint that sets it off from prose (one for light, one for dark backgrounds).
PREVIEW_CSS = "pre {{ white-space: pre-wrap; background-color: {code}; }} code {{ font-family: monospace; }} td, th {{ padding: 3px; }}"
CODE_TINT = {False: "#f3f3f3", True: "#2b2b2b"}
MIN_IMAGE_ROOM = 200
MAX_RENDERED_CHARS = 250_000  # ~1 s of parsing on a slow machine


def fill_document(doc: QTextDocument, markdown: str, *, dark: bool, room: int) -> None:
    """Render `markdown` into `doc` (base URL already set), with images scaled to `room` pixels at most.

    A note past `MAX_RENDERED_CHARS` goes to Qt's own (C++) markdown reader instead: the Python
    parser takes ~3.5 s a megabyte, too long for the UI thread, and so big a note is rare.
    """
    doc.setDefaultStyleSheet(PREVIEW_CSS.format(code=CODE_TINT[dark]))
    if len(markdown) > MAX_RENDERED_CHARS:
        doc.setMarkdown(markdown)
    else:
        doc.setHtml(render_html(markdown, dark=dark))
    fit_images(doc, max(MIN_IMAGE_ROOM, room))


def fit_images(doc: QTextDocument, room: int) -> None:
    """Images wider than `room` are scaled down to it, so none needs a horizontal scroll bar."""
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                image = fmt.toImageFormat()
                loaded = doc.resource(QTextDocument.ResourceType.ImageResource.value, QUrl(image.name()))
                width = loaded.width() if isinstance(loaded, (QImage, QPixmap)) else 0
                if width > room and image.width() <= 0:
                    image.setWidth(room)
                    image.setHeight(loaded.height() * room / width)
                    cursor = QTextCursor(doc)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                    cursor.setCharFormat(image)
            it += 1
        block = block.next()
