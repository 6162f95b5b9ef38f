"""The results list: title, heading path, highlighted snippet and a small score bar per hit."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListView,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from core.base.models import Hit, HitKind, SearchResponse, cited_path
from core.search.query import OUTSIDE_SCOPE
from desktop.controller import AppController
from desktop.elide import elide_where
from desktop.formatting import heading_trail, snippet_html
from desktop.models import DividerRole, HitRole, MoreRole, ResultsModel, ScoreFractionRole
from desktop.panels.hit_menu import hit_line, hit_menu

PAD = 6
BAR_W = 56
SNIPPET_LINES = 3
INDENT = 24  # a note's further passages sit indented under its row
RELATED_HEADING = "Related notes · found by meaning; they do not contain your words"


def divider_height(font: QFont) -> int:
    """Room above the first related note for its divider line and heading."""
    return QFontMetrics(font).height() + 2 * PAD


def more_label(count: int, expanded: bool) -> str:
    """The expander text of a note row with folded passages."""
    noun = "passage" if count == 1 else "passages"
    return f"▾ hide {count} more {noun}" if expanded else f"▸ {count} more {noun} in this note"


def more_rect(option_rect: QRect | QRectF, font: QFont, divider: bool = False) -> QRectF:
    """Where a row's expander is drawn (right end of its second line): also where a click toggles it."""
    r = QRectF(option_rect).adjusted(PAD, PAD + (divider_height(font) if divider else 0), -PAD, -PAD)
    fm = QFontMetrics(font)
    width = fm.horizontalAdvance(more_label(99, False)) + PAD
    return QRectF(r.right() - width, r.y() + fm.height(), width, fm.height())


def results_summary(response: SearchResponse) -> str:
    """The header over the list: it counts matches, and says so whenever related notes fill in."""
    shown = len(response.hits)
    matches = response.match_count
    mode = response.mode if response.mode == response.requested_mode else f"{response.mode} (asked for {response.requested_mode})"
    took = response.timings_ms.get("total")
    tail = f" · {mode}" + (f" · {took:.0f} ms" if took is not None else "")
    if not shown:
        outside = next((w for w in response.warnings if OUTSIDE_SCOPE in w), None)  # a typed folder the tree's scope excludes
        return f"{outside}." if outside else "No notes match. Try fewer words or another mode."
    related = shown - matches
    also = f"{related} related note{'s' if related != 1 else ''} below"
    if not matches:
        return f"No exact matches; {also}{tail}"
    counted = f"{matches} match{'es' if matches != 1 else ''}"
    if related:
        return f"{counted} · no other exact matches; {also}{tail}"
    return f"{counted}{tail}"


class ResultDelegate(QStyledItemDelegate):
    """Paints one hit in three parts; the snippet is rich text so matches show in bold."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        fm = QFontMetrics(option.font)
        extra = divider_height(option.font) if index.data(DividerRole) else 0
        return QSize(200, PAD * 2 + fm.height() * (2 + SNIPPET_LINES) + 4 + extra)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        hit: Hit | None = index.data(HitRole)
        if hit is None:
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        divider = bool(index.data(DividerRole))
        if divider:
            opt.rect = self._paint_divider(painter, opt)
        style = opt.widget.style() if opt.widget else None
        opt.text = ""
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        pal: QPalette = opt.palette
        text_color = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText)
        more = index.data(MoreRole)
        rect = opt.rect.adjusted(PAD + (INDENT if more is None else 0), PAD, -PAD, -PAD)
        fm = QFontMetrics(opt.font)
        line = fm.height()
        painter.save()
        # title and score bar
        bold = QFont(opt.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text_color)
        title_rect = rect.adjusted(0, 0, -(BAR_W + PAD), 0)
        title = QFontMetrics(bold).elidedText(hit.title, Qt.TextElideMode.ElideRight, title_rect.width())
        painter.drawText(title_rect.x(), title_rect.y() + fm.ascent(), title)
        fraction = float(index.data(ScoreFractionRole) or 0.0)
        bar = QRectF(rect.right() - BAR_W, rect.y() + line / 2 - 3, BAR_W, 6)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(pal.color(QPalette.ColorRole.Mid))
        painter.drawRoundedRect(bar, 3, 3)
        painter.setBrush(pal.color(QPalette.ColorRole.Highlight) if not selected else text_color)
        painter.drawRoundedRect(QRectF(bar.x(), bar.y(), max(3.0, BAR_W * fraction), bar.height()), 3, 3)
        # heading trail and where the note lives
        painter.setFont(opt.font)
        painter.setPen(dim)
        trail = heading_trail(hit.chunk.heading_path, hit.title)
        located = cited_path(hit.chunk.rel_path, hit.page)
        where_width = rect.width()
        if more and more[0]:
            link = more_rect(opt.rect, opt.font)  # opt.rect is already below the divider
            where_width = int(link.x() - rect.x() - PAD)
            painter.setPen(pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Link))
            painter.drawText(link, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), more_label(*more))
            painter.setPen(dim)
        painter.drawText(rect.x(), rect.y() + line + fm.ascent(), elide_where(trail, located, where_width, fm.horizontalAdvance))
        _paint_snippet(painter, rect, line, opt.font, hit.snippet, text_color)
        painter.restore()

    @staticmethod
    def _paint_divider(painter: QPainter, opt: QStyleOptionViewItem) -> QRect:
        """A rule and the "Related notes" heading above the first related row; returns the row's rest."""
        height = divider_height(opt.font)
        band = QRect(opt.rect.x(), opt.rect.y(), opt.rect.width(), height)
        painter.save()
        painter.setPen(opt.palette.color(QPalette.ColorRole.Mid))
        painter.drawLine(band.x() + PAD, band.y() + PAD // 2, band.right() - PAD, band.y() + PAD // 2)
        bold = QFont(opt.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(opt.palette.color(QPalette.ColorRole.PlaceholderText))
        text = QFontMetrics(bold).elidedText(RELATED_HEADING, Qt.TextElideMode.ElideRight, band.width() - 2 * PAD)
        painter.drawText(band.adjusted(PAD, PAD, -PAD, 0), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text)
        painter.restore()
        return opt.rect.adjusted(0, height, 0, 0)


def _paint_snippet(painter: QPainter, rect: QRect, line: int, font: QFont, snippet: str, text_color: QColor) -> None:
    """The snippet under the title and trail, clipped to `SNIPPET_LINES` lines."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setHtml(snippet_html(snippet))
    doc.setTextWidth(rect.width())
    painter.translate(rect.x(), rect.y() + 2 * line + 2)
    clip = QRectF(0, 0, rect.width(), line * SNIPPET_LINES)
    painter.setClipRect(clip)
    ctx = QAbstractTextDocumentLayout.PaintContext()
    ctx.palette.setColor(QPalette.ColorRole.Text, text_color)
    ctx.clip = clip
    doc.documentLayout().draw(painter, ctx)


class _ResultsView(QListView):
    """Enter opens the selected note; Right/Left (or +/-) show and hide a note's further passages."""

    def __init__(self, panel: ResultsPanel) -> None:
        super().__init__(panel)
        self._panel = panel

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            self._panel.open_current()
            return
        if key in (Qt.Key.Key_Right, Qt.Key.Key_Plus, Qt.Key.Key_Left, Qt.Key.Key_Minus):
            more = self.currentIndex().data(MoreRole)
            wants_open = key in (Qt.Key.Key_Right, Qt.Key.Key_Plus)
            if more and more[0] and more[1] != wants_open:
                self._panel.model.toggle_more(self.currentIndex().row())
                return
        super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        index = self.indexAt(event.position().toPoint())
        more = index.data(MoreRole) if index.isValid() else None
        divider = bool(index.data(DividerRole)) if index.isValid() else False
        if more and more[0] and more_rect(QRectF(self.visualRect(index)), self.font(), divider).contains(event.position()):
            self._panel.model.toggle_more(index.row())
            self.setCurrentIndex(index)
            return
        super().mousePressEvent(event)


class ResultsPanel(QWidget):
    """Centre of the window: the newest search's hits; selecting one shows it in the side tabs."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.model = ResultsModel(self)
        self._shown_query: str | None = None
        self.summary = QLabel("Type to search your notes.", self)
        self.summary.setAccessibleName("Search summary")
        self.summary.setWordWrap(True)
        self.refresh = QPushButton("New results available · Refresh", self)
        self.refresh.setAccessibleName("Show the newer results")
        self.refresh.setToolTip("The index changed while you read (embeddings arriving); the list stays put until you refresh")
        self.refresh.setFlat(True)
        self.refresh.setVisible(False)
        self.refresh.clicked.connect(controller.rerun_search)
        self.view = _ResultsView(self)
        self.view.setModel(self.model)
        self.view.setItemDelegate(ResultDelegate(self.view))
        self.view.setAccessibleName("Search results")
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.view.selectionModel().currentChanged.connect(self._on_current)
        self.view.doubleClicked.connect(lambda _index: self.open_current())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)  # alone on its row: a wrapped label beside a button raised the window's minimum height
        layout.addWidget(self.refresh, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.view, 1)
        controller.searchStarted.connect(self._on_started)
        controller.resultsReady.connect(self._on_results)
        controller.resultsCleared.connect(self._on_cleared)
        controller.searchFailed.connect(self._on_failed)
        controller.hitSelected.connect(self._on_hit_selected)
        controller.resultsOutdated.connect(lambda: self.refresh.setVisible(True))

    def focus_results(self) -> None:
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not self.view.currentIndex().isValid() and self.model.rowCount():
            self.view.setCurrentIndex(self.model.index(0))

    def open_current(self) -> None:
        hit = self.model.hit(self.view.currentIndex().row())
        vault = self._controller.engine.config.vault_named(hit.chunk.vault) if hit else None
        if hit is not None and vault is not None:
            line = hit_line(vault.root, hit.chunk.rel_path, hit.start_byte)
            # A failure is said in the status line, with what was tried.
            self._controller.actions.open_in_editor(vault.root, hit.chunk.rel_path, line, self._controller.settings.editor_command)

    def _on_started(self, _seq: int) -> None:
        if not self.model.rowCount():
            self.summary.setText("Searching…")

    def _on_results(self, response: SearchResponse) -> None:
        self.refresh.setVisible(False)
        bar = self.view.verticalScrollBar()
        rerun, scrolled = response.query == self._shown_query, bar.value()
        self._shown_query = response.query
        # Rows are alike unless the first related note carries the divider (uniform rows scroll steadier).
        self.view.setUniformItemSizes(all(h.kind == HitKind.MATCH for h in response.hits))
        self.model.set_hits(response.hits)
        if rerun:  # the same query again (the index changed): the reader keeps their place
            self.view.doItemsLayout()  # rows differ in height (the divider), so lay out before scrolling
            bar.setValue(scrolled)
        self.summary.setText(results_summary(response))

    def _on_cleared(self) -> None:
        self.refresh.setVisible(False)
        self._shown_query = None
        self.model.set_hits(())
        self.summary.setText("Type to search your notes.")

    def _on_failed(self, message: str) -> None:
        self.model.set_hits(())
        self.summary.setText(message)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        hit = self.model.hit(current.row())
        if hit is not None and hit is not self._controller.selected:
            self._controller.select_hit(hit)

    def _on_hit_selected(self, hit: Hit | None) -> None:
        row = self.model.row_of(hit)
        if row >= 0 and self.view.currentIndex().row() != row:
            self.view.setCurrentIndex(self.model.index(row))  # _on_current sees it is already selected

    def _menu(self, pos: QPoint) -> None:
        hit = self.model.hit(self.view.indexAt(pos).row())
        if hit is not None:
            hit_menu(self._controller, hit, self).exec(self.view.viewport().mapToGlobal(pos))
