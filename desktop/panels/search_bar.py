"""The query box, mode selector and filter controls; searches as you type."""

from __future__ import annotations

import html

from PySide6.QtCore import QDate, QEvent, QObject, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDateEdit,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.base.models import SearchFilters
from desktop.controller import AppController, Scope
from desktop.panels.property_facet import PropertyFacetButton
from desktop.settings import MODES
from desktop.state import VaultSnapshot

NO_DATE = QDate(1900, 1, 1)


class SearchBarPanel(QWidget):
    """Top of the window: typing searches after a short pause; Enter searches at once.

    Signals:
        navigateDown: The user pressed Down in the query box (focus the results).
    """

    navigateDown = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(controller.settings.debounce_ms)
        self._timer.timeout.connect(self.search_now)

        self.query = QLineEdit(self)
        self.query.setPlaceholderText('Search your notes — e.g. sourdough rest, "exact phrase", tag:recipe, folder:Journal, status:draft, rating>=4')
        self.query.setAccessibleName("Search query")
        self.query.setClearButtonEnabled(True)
        self.query.textEdited.connect(self._schedule)
        self.query.returnPressed.connect(self.search_now)
        self.query.installEventFilter(self)

        self.mode = QComboBox(self)
        self.mode.setAccessibleName("Search mode")
        for m in MODES:
            self.mode.addItem(m.capitalize(), m)
        self.mode.setCurrentIndex(max(0, self.mode.findData(controller.settings.default_mode)))
        self.mode.currentIndexChanged.connect(self.search_now)

        self.scope_label = QLabel(self)
        self.scope_label.setAccessibleName("Search scope")
        self.scope_clear = QToolButton(self)
        self.scope_clear.setText("✕")
        self.scope_clear.setToolTip("Search every vault")
        self.scope_clear.setAccessibleName("Clear search scope")
        self.scope_clear.clicked.connect(lambda: controller.set_scope(None))

        self.tags = QLineEdit(self)
        self.tags.setPlaceholderText("tags, comma separated")
        self.tags.setAccessibleName("Tag filter")
        self._tag_words = QStringListModel(self)
        completer = QCompleter(self._tag_words, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.tags.setCompleter(completer)
        self.tags.textEdited.connect(self._schedule)
        self.tags.returnPressed.connect(self.search_now)
        self.tag_mode = QComboBox(self)
        self.tag_mode.setAccessibleName("Tag match")
        self.tag_mode.addItem("any tag", "any")
        self.tag_mode.addItem("all tags", "all")
        self.tag_mode.currentIndexChanged.connect(self.search_now)

        self.after = self._date_edit("Notes dated on or after")
        self.before = self._date_edit("Notes dated on or before")
        self.doc_type = QComboBox(self)
        self.doc_type.setAccessibleName("Document type filter")
        self.doc_type.addItem("any type", "")
        self.doc_type.currentIndexChanged.connect(self.search_now)

        self._lay_out()

        controller.scopeChanged.connect(self._on_scope)
        controller.snapshotChanged.connect(self._on_snapshot)
        controller.settingsChanged.connect(lambda s: self._timer.setInterval(s.debounce_ms))
        self._show_scope(controller.scope)

    def _lay_out(self) -> None:
        """The query and mode on top; tags, dates, type and scope below."""
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        c = self._controller
        self.properties = PropertyFacetButton(lambda: c.snapshot, lambda: c.scope.vault if c.scope else None, self)
        self.properties.filterPicked.connect(self.add_filter)
        top.addWidget(self.properties)  # beside the query it adds to (the filter row is full at 720 px)
        top.addWidget(self.mode)
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Tags:", self))
        filters.addWidget(self.tags, 1)
        filters.addWidget(self.tag_mode)
        filters.addSpacing(8)
        filters.addWidget(QLabel("From:", self))
        filters.addWidget(self.after)
        filters.addWidget(QLabel("to:", self))
        filters.addWidget(self.before)
        filters.addSpacing(8)
        filters.addWidget(QLabel("Type:", self))
        filters.addWidget(self.doc_type)
        filters.addSpacing(8)
        filters.addWidget(self.scope_label)
        filters.addWidget(self.scope_clear)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 2)
        layout.addLayout(top)
        layout.addLayout(filters)

    def _date_edit(self, name: str) -> QDateEdit:
        edit = QDateEdit(self)
        edit.setAccessibleName(name)
        edit.setCalendarPopup(True)
        edit.setDisplayFormat("yyyy-MM-dd")
        edit.setMinimumDate(NO_DATE)
        edit.setSpecialValueText("any")  # shown while the date is the minimum: no filter
        edit.setDate(NO_DATE)
        edit.dateChanged.connect(self._schedule)
        return edit

    # -- state -----------------------------------------------------------------------------

    def current_mode(self) -> str:
        return str(self.mode.currentData())

    def set_mode(self, mode: str) -> None:
        self.mode.setCurrentIndex(max(0, self.mode.findData(mode)))

    def filters(self) -> SearchFilters:
        """What the filter row asks for; the tree's scope is added by the controller."""
        tags = tuple(t.strip().lstrip("#").lower() for t in self.tags.text().split(",") if t.strip())
        doc_type = str(self.doc_type.currentData() or "")
        return SearchFilters(
            tags=tags,
            tag_mode=str(self.tag_mode.currentData()),
            doc_types=(doc_type,) if doc_type else (),
            after=_date_or_none(self.after),
            before=_date_or_none(self.before),
        )

    def add_filter(self, text: str) -> None:
        """Add a filter (from the property facet) to the query and search at once."""
        current = self.query.text().rstrip()
        if text not in current.split():
            self.query.setText(f"{current} {text}".strip())
        self.search_now()

    def clear(self) -> None:
        """Esc: empty the query and the filters, and show no results."""
        self._timer.stop()
        self.query.clear()
        self.tags.clear()
        self.after.setDate(NO_DATE)
        self.before.setDate(NO_DATE)
        self.doc_type.setCurrentIndex(0)
        self.search_now()

    # -- searching -------------------------------------------------------------------------

    def _schedule(self) -> None:
        self._timer.start()

    def search_now(self) -> None:
        self._timer.stop()
        text = self.query.text()
        self._controller.remember_query(text)
        self._controller.search(text, self.current_mode(), self.filters())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.query and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Down:
                self.navigateDown.emit()
                return True
        return super().eventFilter(watched, event)

    def _on_scope(self, scope: Scope | None) -> None:
        self._show_scope(scope)
        self.search_now()

    def _show_scope(self, scope: Scope | None) -> None:
        self.scope_label.setText(f"in <b>{html.escape(scope.label())}</b>" if scope else "in all vaults")
        self.scope_clear.setVisible(scope is not None)

    def _on_snapshot(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        self._tag_words.setStringList(sorted({t for s in snapshots for t in s.tags()}))
        current = str(self.doc_type.currentData() or "")
        types = sorted({t for s in snapshots for t in s.doc_types()})
        self.doc_type.blockSignals(True)
        self.doc_type.clear()
        self.doc_type.addItem("any type", "")
        for t in types:
            self.doc_type.addItem(t, t)
        self.doc_type.setCurrentIndex(max(0, self.doc_type.findData(current)))
        self.doc_type.blockSignals(False)  # the controller re-runs the shown query after a new snapshot


def _date_or_none(edit: QDateEdit) -> str | None:
    day = edit.date()
    return None if day == NO_DATE or not day.isValid() else day.toString("yyyy-MM-dd")
