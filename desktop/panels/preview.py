"""Preview tab: the note rendered as markdown, its properties, and the hit's chunk highlighted."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextBlockFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTextBrowser, QToolButton, QVBoxLayout, QWidget

from core.base.models import Hit
from core.index.pages import page_text
from core.vault.attachments import attachment_kind
from desktop.actions import note_path
from desktop.controller import AppController
from desktop.formatting import heading_trail
from desktop.note_text import END, START, prepare, read_note
from desktop.panels.hit_menu import hit_menu
from desktop.theme import colours


class PreviewPanel(QWidget):
    """Shows the selected hit's note, scrolled so its chunk is at the top."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._hit: Hit | None = None
        self._shown: tuple[str, str, int, int, bytes] | None = None  # the chunk and note text on screen
        self.chunk_range: tuple[int, int] | None = None  # document positions of the highlighted chunk
        self.header = QLabel("Select a result to preview its note.", self)
        self.header.setWordWrap(True)
        self.header.setAccessibleName("Previewed note")
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.actions_button = QToolButton(self)
        self.actions_button.setText("Actions")
        self.actions_button.setAccessibleName("Actions on this note")
        self.actions_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.actions_button.setEnabled(False)
        self.actions_button.pressed.connect(self._show_menu)
        self.properties = QLabel(self)
        self.properties.setAccessibleName("Note properties")
        self.properties.setWordWrap(True)
        self.properties.setTextFormat(Qt.TextFormat.RichText)
        self.properties.setVisible(False)
        self.browser = QTextBrowser(self)
        self.browser.setAccessibleName("Note preview")
        self.browser.setOpenExternalLinks(False)
        self.browser.setOpenLinks(False)
        head = QHBoxLayout()
        head.addWidget(self.header, 1)
        head.addWidget(self.actions_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(head)
        layout.addWidget(self.properties)
        layout.addWidget(self.browser, 1)
        controller.hitSelected.connect(self.show_hit)

    def show_hit(self, hit: Hit | None) -> None:
        self._hit = hit
        self.actions_button.setEnabled(hit is not None)
        if hit is None:
            self._shown = self.chunk_range = None
            self.header.setText("Select a result to preview its note.")
            self.properties.setVisible(False)
            self.browser.clear()
            return
        trail = heading_trail(hit.chunk.heading_path, hit.title)
        where = f" › {html.escape(trail)}" if trail else ""
        self.header.setText(f"<b>{html.escape(hit.title)}</b>{where}<br><small>{html.escape(hit.chunk.vault)}/{html.escape(hit.chunk.rel_path)}</small>")
        vault = self._controller.engine.config.vault_named(hit.chunk.vault)
        if vault is None:
            self._show_error("This vault is no longer configured.")
            return
        if attachment_kind(hit.chunk.rel_path) is not None:
            self._show_attachment(hit, vault.root)
            return
        try:
            raw = read_note(note_path(vault.root, hit.chunk.rel_path))
        except OSError as exc:
            self._show_error(f"Cannot read the note: {exc.strerror or exc}")
            return
        shown = (hit.chunk.vault, hit.chunk.rel_path, hit.start_byte, hit.end_byte, raw)
        if shown == self._shown:
            return  # the search re-ran (another note changed): leave the reader where they scrolled
        self._shown = shown
        self.chunk_range = None
        note = prepare(raw, hit.start_byte, hit.end_byte)
        self._show_properties(note.properties, note.properties_error)
        doc = QTextDocument(self.browser)
        doc.setMarkdown(note.markdown)
        self.browser.setDocument(doc)
        if note.marked:
            start = _take_marker(doc, START)
            end = _take_marker(doc, END)
            if start is not None:
                self.chunk_range = (start, end if end is not None and end > start else doc.characterCount() - 1)
                self._highlight(doc, *self.chunk_range)
        self.scroll_to_chunk()
        QTimer.singleShot(0, self.scroll_to_chunk)  # once the viewport has laid the document out

    def _show_attachment(self, hit: Hit, root: str) -> None:
        """A PDF's page (as indexed) or a text file, as plain text with the hit's chunk marked.

        The PDF is not parsed here: its page is put together from the chunks the index
        stored (`core.index.pages`), so the UI thread never runs the PDF parser.
        """
        if hit.page is not None:
            try:
                page = page_text(self._controller.engine.index_for(hit.chunk.vault), hit.chunk.rel_path, hit.page, hit.chunk.ordinal)
            except Exception as exc:  # noqa: BLE001 - the index may be rebuilding; say so, never crash the view
                self._show_error(f"Cannot show this page: {exc}")
                return
            if page is None:
                self._show_error("This page is no longer in the index; search again.")
                return
            text, start, end = page.text, page.start, page.end
            located = f"page {page.page} of {page.pages}"
        else:
            try:
                raw = read_note(note_path(root, hit.chunk.rel_path))
            except OSError as exc:
                self._show_error(f"Cannot read the file: {exc.strerror or exc}")
                return
            marked = 0 <= hit.start_byte < hit.end_byte <= len(raw)
            text = raw.decode("utf-8", "replace")
            start = len(raw[: hit.start_byte].decode("utf-8", "replace")) if marked else 0
            end = start + len(raw[hit.start_byte : hit.end_byte].decode("utf-8", "replace")) if marked else 0
            located = "plain text"
        shown = (hit.chunk.vault, hit.chunk.rel_path, start, end, text.encode("utf-8"))
        if shown == self._shown:
            return
        self._shown = shown
        self.header.setText(self.header.text().replace("</small>", f" · {html.escape(located)}</small>", 1))
        self.properties.setVisible(False)
        doc = QTextDocument(self.browser)
        doc.setPlainText(text)
        self.browser.setDocument(doc)
        # QTextDocument counts UTF-16 code units: characters beyond the BMP count twice.
        self.chunk_range = (_utf16(text, start), _utf16(text, end)) if end > start else None
        if self.chunk_range is not None:
            self._highlight(doc, *self.chunk_range)
        self.scroll_to_chunk()
        QTimer.singleShot(0, self.scroll_to_chunk)

    def scroll_to_chunk(self) -> None:
        bar = self.browser.verticalScrollBar()
        if self.chunk_range is None:
            bar.setValue(0)
            return
        doc = self.browser.document()
        block = doc.findBlock(self.chunk_range[0])
        top = doc.documentLayout().blockBoundingRect(block).top()
        bar.setValue(max(0, int(top) - 6))

    def _highlight(self, doc: QTextDocument, start: int, end: int) -> None:
        cursor = QTextCursor(doc)
        cursor.setPosition(start)
        cursor.setPosition(max(start, end - 1), QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextBlockFormat()
        fmt.setBackground(colours(self.palette()).highlight)
        cursor.mergeBlockFormat(fmt)

    def _show_properties(self, properties: list[tuple[str, str]], error: str | None) -> None:
        dim = colours(self.palette()).dim
        rows = "".join(
            f"<tr><td style='color:{dim};padding-right:10px'>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
            for k, v in properties
        )
        text = f"<table>{rows}</table>" if rows else ""
        if error:
            text += f"<p style='color:{colours(self.palette()).error}'>{html.escape(error)}</p>"
        self.properties.setText(text)
        self.properties.setVisible(bool(text))

    def _show_error(self, message: str) -> None:
        self._shown = self.chunk_range = None
        self.properties.setVisible(False)
        self.browser.setPlainText(message)

    def _show_menu(self) -> None:
        if self._hit is not None:
            menu = hit_menu(self._controller, self._hit, self)
            menu.exec(self.actions_button.mapToGlobal(self.actions_button.rect().bottomLeft()))
            self.actions_button.setDown(False)


def _take_marker(doc: QTextDocument, marker: str) -> int | None:
    """Remove the sentinel (and the space after it) and return where it was."""
    for needle in (marker + " ", marker):
        found = doc.find(needle, 0, QTextDocument.FindFlag.FindCaseSensitively)
        if not found.isNull():
            position = found.selectionStart()
            found.removeSelectedText()
            return position
    return None


def _utf16(text: str, index: int) -> int:
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)
