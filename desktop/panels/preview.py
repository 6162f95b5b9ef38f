"""Preview tab: the note rendered as markdown, its properties, and the hit's chunk highlighted.

Links work as in Obsidian: a `[[wikilink]]` or a link to a local note opens that note here (at
the heading or block it names), embeds show a collapsed excerpt or the image, web links open
in the browser after asking. Back and Forward (Alt+Left / Alt+Right) walk the notes visited.
Under the note: its backlinks, unlinked mentions and related notes (`LinksPanel`).

This module shows notes and keeps the history; where a clicked link leads is decided in
`desktop.panels.preview_links` (`LinkFollower`), which calls back `open_note`.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QColor,
    QKeyEvent,
    QKeySequence,
    QShortcut,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.base.models import Hit
from core.index.pages import page_text
from core.vault.attachments import attachment_kind
from core.vault.canvas import read_canvas
from core.vault.kinds import kind_of
from core.vault.render_html import reflow
from desktop.actions import note_path
from desktop.controller import AppController
from desktop.formatting import heading_trail
from desktop.note_links import parse_note_url, preview_markdown
from desktop.note_locator import NoteLocator
from desktop.note_text import END, START, prepare, read_note
from desktop.panels.hit_menu import hit_menu
from desktop.panels.links_panel import LinksPanel
from desktop.panels.preview_doc import fill_document
from desktop.panels.preview_links import LinkFollower
from desktop.panels.preview_ocr import OcrOverlay
from desktop.theme import colours, is_dark

MAX_HISTORY = 100


class PreviewPanel(QWidget):
    """Shows the selected hit's note, scrolled so its chunk is at the top."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._locator: NoteLocator | None = None
        self._history: list[Hit] = []
        self._at = -1  # index of the shown location in `_history`
        #: Asks before a web link leaves the app; replaced in tests.
        self.confirm_external: Callable[[str], bool] = self._ask_external
        self._follower = LinkFollower(  # late-bound, so a replaced `confirm_external` or `open_note` is the one used
            controller,
            lambda: self.locator,
            lambda vault, rel_path, anchor: self.open_note(vault, rel_path, anchor),
            lambda address: self.confirm_external(address),
        )
        self._hit: Hit | None = None
        self._shown: tuple[str, str, int, int, bytes] | None = None  # the chunk and note text on screen
        self.chunk_range: tuple[int, int] | None = None  # document positions of the highlighted chunk
        self.ocr = OcrOverlay(controller)  # an image's or a scanned page's picture, the query's words marked
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
        # Long words and code wrap anywhere, so the note never needs a horizontal scroll bar.
        self.browser.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.browser.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.browser.anchorClicked.connect(self.follow_link)
        self.browser.installEventFilter(self)  # QTextBrowser keeps Alt+Left/Right for its own (unused) history
        self.back_button = _nav_button(self, "◀", "Back (Alt+Left)", self.back)
        self.forward_button = _nav_button(self, "▶", "Forward (Alt+Right)", self.forward)
        for keys, slot in ((QKeySequence("Alt+Left"), self.back), (QKeySequence("Alt+Right"), self.forward)):
            shortcut = QShortcut(keys, self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(slot)
        self.links = LinksPanel(controller, self)
        self.links.openRequested.connect(self.open_note)
        self._lay_out()
        controller.hitSelected.connect(self.show_hit)
        self._update_nav()

    def _lay_out(self) -> None:
        """Back, Forward, the note's name and actions above the note, the links panel below it."""
        head = QHBoxLayout()
        head.addWidget(self.back_button)
        head.addWidget(self.forward_button)
        head.addWidget(self.header, 1)
        head.addWidget(self.actions_button)
        note = QWidget(self)
        note_layout = QVBoxLayout(note)
        note_layout.setContentsMargins(0, 0, 0, 0)
        note_layout.addWidget(self.properties)
        note_layout.addWidget(self.browser, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.setObjectName("previewSplitter")
        self.splitter.addWidget(note)
        self.splitter.addWidget(self.links)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(head)
        layout.addWidget(self.splitter, 1)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.browser and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.modifiers() == Qt.KeyboardModifier.AltModifier and event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Right):
                self.back() if event.key() == Qt.Key.Key_Left else self.forward()
                return True
        return super().eventFilter(watched, event)

    @property
    def locator(self) -> NoteLocator:
        """Link resolution against the controller's current engine (it is replaced when settings change)."""
        if self._locator is None or self._locator.engine is not self._controller.engine:
            self._locator = NoteLocator(self._controller.engine)
        return self._locator

    # -- navigation ------------------------------------------------------------------------

    def show_hit(self, hit: Hit | None) -> None:
        """Show a hit (from the results, an answer or a link) as a new place in the history."""
        if hit is not None and not (0 <= self._at < len(self._history) and _same_place(self._history[self._at], hit)):
            del self._history[self._at + 1 :]
            self._history.append(hit)
            del self._history[:-MAX_HISTORY]
            self._at = len(self._history) - 1
        self._render(hit)

    def back(self) -> None:
        if self._at > 0:
            self._at -= 1
            self._render(self._history[self._at])

    def forward(self) -> None:
        if self._at < len(self._history) - 1:
            self._at += 1
            self._render(self._history[self._at])

    def open_note(self, vault: str, rel_path: str, anchor: str = "", line: int = 0) -> bool:
        """Show a note at a heading, block (`^id`) or line; False (and a status message) if it is not indexed."""
        hit = self.locator.hit_for(vault, rel_path, anchor, line)
        if hit is None:
            self._controller.message.emit(f"{rel_path} is not an indexed note of {vault}")
            return False
        self.show_hit(hit)
        self.scroll_to_chunk()
        return True

    def follow_link(self, url: QUrl) -> None:
        """A click on a link in the note: another note, a web page (after asking) or a file."""
        if self._hit is not None:
            self._follower.follow(url, self._hit.chunk.vault, self._hit.chunk.rel_path)

    def follow_link_anywhere(self, url: QUrl) -> bool:
        """A link with no note around it (in an answer): look in every vault. True if a note opened."""
        return self._follower.follow_anywhere(url)

    def _ask_external(self, address: str) -> bool:
        answer = QMessageBox.question(
            self, "Open web page?", f"Open this address in your browser?\n\n{address}", QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel
        )
        return answer == QMessageBox.StandardButton.Open

    def _update_nav(self) -> None:
        self.back_button.setEnabled(self._at > 0)
        self.forward_button.setEnabled(0 <= self._at < len(self._history) - 1)

    def _render(self, hit: Hit | None) -> None:
        self._hit = hit
        self._update_nav()
        self.actions_button.setEnabled(hit is not None)
        self.links.show_note(hit.chunk.vault if hit else None, hit.chunk.rel_path if hit else None)
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
        vault_name, rel = hit.chunk.vault, hit.chunk.rel_path
        markdown = preview_markdown(
            note.markdown,
            excerpt=lambda target, anchor: self.locator.excerpt(vault_name, rel, target, anchor),
            attachment=lambda target: self.locator.attachment(vault_name, rel, target),
        )
        doc.setBaseUrl(QUrl.fromLocalFile(str(note_path(vault.root, rel).parent) + "/"))  # relative images load
        fill_document(doc, markdown, dark=is_dark(self.palette()), room=self.browser.viewport().width() - 40)
        self._dim_dead_links(doc, vault_name, rel)
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
        """A PDF's page, an e-book's chapter, a message, a conversation (as indexed) or a text
        file, as plain text with the hit's chunk marked.

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
            kind = kind_of(hit.chunk.rel_path)
            noun = "page" if kind is None or kind.unit is None else kind.unit
            # One-unit files (a Word document, a web page) need no "1 of 1".
            located = kind.label[0] if kind is not None and kind.unit is None else f"{noun} {page.page} of {page.pages}"
        else:
            try:
                raw = read_note(note_path(root, hit.chunk.rel_path))
            except OSError as exc:
                self._show_error(f"Cannot read the file: {exc.strerror or exc}")
                return
            canvas = attachment_kind(hit.chunk.rel_path) == "canvas"
            if canvas:  # its chunks index the cards laid out as text, not the JSON
                raw = read_canvas(raw).text.encode("utf-8")
            marked = 0 <= hit.start_byte < hit.end_byte <= len(raw)
            text = raw.decode("utf-8", "replace")
            start = len(raw[: hit.start_byte].decode("utf-8", "replace")) if marked else 0
            end = start + len(raw[hit.start_byte : hit.end_byte].decode("utf-8", "replace")) if marked else 0
            located = "canvas cards" if canvas else "plain text"
        shown = (hit.chunk.vault, hit.chunk.rel_path, start, end, text.encode("utf-8") + self.ocr.marking(hit))
        if shown == self._shown:
            return
        self._shown = shown
        self.header.setText(self.header.text().replace("</small>", f" · {html.escape(located)}</small>", 1))
        self.properties.setVisible(False)
        doc = QTextDocument(self.browser)
        pdf = attachment_kind(hit.chunk.rel_path) == "pdf"
        doc.setPlainText(reflow(text) if pdf else text)  # a PDF's line breaks are layout; a message's or a table's are not
        self.browser.setDocument(doc)
        # QTextDocument counts UTF-16 code units: characters beyond the BMP count twice. OCR'd: the picture on top.
        self.chunk_range = None if self.ocr.insert(doc, hit, root, self.browser.width() - 60) or end <= start else (_utf16(text, start), _utf16(text, end))
        if self.chunk_range is not None:
            self._highlight(doc, *self.chunk_range)
        self.scroll_to_chunk()
        QTimer.singleShot(0, self.scroll_to_chunk)

    def _dim_dead_links(self, doc: QTextDocument, vault: str, source: str) -> None:
        """Links to notes that do not exist yet look dimmer, as in Obsidian, and say so."""
        dim = QColor(colours(self.palette()).dim)
        block = doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                wiki = parse_note_url(fragment.charFormat().anchorHref())
                if wiki is not None and wiki[0] and self.locator.resolve(vault, source, *wiki) is None:
                    cursor = QTextCursor(doc)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                    fmt = QTextCharFormat()
                    fmt.setForeground(dim)
                    fmt.setToolTip(f"No note named “{wiki[0]}” yet")
                    cursor.mergeCharFormat(fmt)
                it += 1
            block = block.next()

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


def _nav_button(parent: QWidget, text: str, tip: str, slot: Callable[[], None]) -> QToolButton:
    button = QToolButton(parent)
    button.setText(text)
    button.setToolTip(tip)
    button.setAccessibleName(tip.split(" (")[0])
    button.setAutoRaise(True)
    button.clicked.connect(slot)
    return button


def _same_place(a: Hit, b: Hit) -> bool:
    return (a.chunk.vault, a.chunk.rel_path, a.start_byte, a.end_byte) == (b.chunk.vault, b.chunk.rel_path, b.start_byte, b.end_byte)


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
