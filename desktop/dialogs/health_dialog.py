"""Index health: every file, indexed or skipped, with the reason — filterable, with "open file"."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.base.vault_state import LiveState
from core.vault.attachments import describe_attachments
from desktop.controller import AppController
from desktop.models import HealthFilterProxy, HealthModel, RowRole
from desktop.state import HealthRow, VaultSnapshot, describe_status, health_rows

STATES = (("All files", ""), ("Indexed", "indexed"), ("With warnings", "warning"), ("Skipped", "skipped"))


class IndexHealthDialog(QDialog):
    """A table of every file of every vault; refreshes when the index changes."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.setWindowTitle("Index health")
        self.resize(900, 520)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("Index health summary")
        self.text_filter = QLineEdit(self)
        self.text_filter.setPlaceholderText("Filter by path or reason")
        self.text_filter.setAccessibleName("Filter files")
        self.text_filter.setClearButtonEnabled(True)
        self.state_filter = QComboBox(self)
        self.state_filter.setAccessibleName("Show files that are")
        for label, value in STATES:
            self.state_filter.addItem(label, value)
        self.model = HealthModel([], self)
        self.proxy = HealthFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView(self)
        self.table.setModel(self.proxy)
        self.table.setAccessibleName("Files and their index state")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)  # warnings and skipped files first
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.open_button = QPushButton("Open file", self)
        self.open_button.setAccessibleName("Open the selected file")
        self.open_button.setEnabled(False)
        self.reindex_button = QPushButton("Re-index all", self)
        self._lay_out()

        self.text_filter.textChanged.connect(self.proxy.set_text)
        self.state_filter.currentIndexChanged.connect(lambda _i: self.proxy.set_state(str(self.state_filter.currentData())))
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self.open_button.setEnabled(cur.isValid()))
        self.table.doubleClicked.connect(self._open_index)
        self.open_button.clicked.connect(lambda: self._open_index(self.table.currentIndex()))
        self.reindex_button.clicked.connect(lambda: controller.index())
        controller.snapshotChanged.connect(self.set_snapshots)
        controller.board.changed.connect(self._show_summary)  # live while indexing runs, not just at the end
        self._counts = {"indexed": 0, "warning": 0, "skipped": 0}
        self.set_snapshots(controller.snapshot)

    def _lay_out(self) -> None:
        """Filters above the table, Open file / Re-index all / Close below."""
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(self.open_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.reindex_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        filters = QHBoxLayout()
        filters.addWidget(self.text_filter, 1)
        filters.addWidget(self.state_filter)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)

    def set_snapshots(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        rows = health_rows(snapshots)
        self.model.set_rows(rows)
        self._counts = {s: sum(1 for r in rows if r.state == s) for s in ("indexed", "warning", "skipped")}
        self._show_summary()

    def _show_summary(self, _board: object = None) -> None:
        board = self._controller.board
        lines = []
        for snap in self._controller.snapshot:
            p = board.get(snap.name)
            state, text = describe_status(snap, p)
            line = f"{html.escape(text)} ({state})"
            if p is not None and p.reason and p.semantic.degraded:
                line += f" — {html.escape(p.reason)}"
            if p is not None and p.live is LiveState.FAILED:
                line += f"<br>&nbsp;&nbsp;live updates: {html.escape(p.live_reason)}"
            lines.append(line)
        states = "<br>".join(lines) or "No vaults yet."
        attached = "; ".join(
            f"{s.name}: {describe_attachments(s.status.attachments)}" for s in self._controller.snapshot if s.status.attachments
        )
        if attached:
            states += f"<br>Attachments — {html.escape(attached)}"
        c = self._counts
        self.summary.setText(f"{states}<br>{c['indexed']} indexed, {c['warning']} indexed with warnings, {c['skipped']} skipped.")

    def visible_rows(self) -> list[HealthRow]:
        return [self.proxy.index(r, 0).data(RowRole) for r in range(self.proxy.rowCount())]

    def _open_index(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        row: HealthRow = index.siblingAtColumn(0).data(RowRole)
        self._controller.actions.open_path(Path(row.abs_path))
