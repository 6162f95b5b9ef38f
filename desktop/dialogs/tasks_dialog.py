"""The Tasks view: task lines of the vaults (or the one in scope), filtered like a search.

Read from the vault snapshots the window holds (their manifests carry every task), so it
costs no note read and runs on the GUI thread. Double-click (or Enter) opens the note in
the editor at the task's line.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.search.tasks import TaskHit, find_tasks
from desktop.controller import AppController
from desktop.formatting import heading_trail

COLUMNS = ("Task", "Note", "Due", "Priority")
MAX_ROWS = 2_000


class TasksDialog(QDialog):
    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.setWindowTitle("Tasks")
        self.resize(900, 520)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("words and filters — e.g. venue, project:Launch, due<2026-12-01")
        self.query.setAccessibleName("Task filter")
        self.state = QComboBox(self)
        self.state.setAccessibleName("Task state")
        for label, value in (("Open", "open"), ("Done", "done"), ("All", "")):
            self.state.addItem(label, value)
        self.summary = QLabel(self)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Tasks")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.doubleClicked.connect(lambda index: self.open_row(index.row()))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.state)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self.refresh)
        self.query.textEdited.connect(lambda _t: self._timer.start())
        self.state.currentIndexChanged.connect(self.refresh)
        controller.snapshotChanged.connect(lambda _s: self.refresh())
        self.hits: list[TaskHit] = []
        self.refresh()

    def refresh(self) -> None:
        scope = self._controller.scope
        hits: list[TaskHit] = []
        warnings: tuple[str, ...] = ()
        for snap in self._controller.snapshot:
            if scope is not None and snap.name != scope.vault:
                continue
            found, warnings = find_tasks(snap.name, snap.files, self.query.text(), state=str(self.state.currentData()) or None)
            hits.extend(found)
        hits.sort(key=lambda h: (h.task.due or "9999", h.vault, h.rel_path, h.task.line))
        self.hits = hits[:MAX_ROWS]
        self.table.setRowCount(len(self.hits))
        for row, h in enumerate(self.hits):
            mark = "☑" if not h.task.status.is_open else "☐"
            trail = heading_trail(h.task.heading, h.title)
            cells = (f"{mark} {h.task.text}", f"{h.title} › {trail}" if trail else h.title, h.task.due or "", h.task.priority)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{h.vault}/{h.rel_path}:{h.task.line}")
                self.table.setItem(row, col, item)
        more = f" (first {MAX_ROWS:,} shown)" if len(hits) > MAX_ROWS else ""
        self.summary.setText("; ".join(warnings) or f"{len(hits):,} task(s){more}")

    def open_row(self, row: int) -> None:
        if not 0 <= row < len(self.hits):
            return
        h = self.hits[row]
        snap = self._controller.vault_snapshot(h.vault)
        if snap is not None:
            self._controller.actions.open_in_editor(snap.root, h.rel_path, h.task.line, self._controller.settings.editor_command)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.table.hasFocus():
            self.open_row(self.table.currentRow())
            return
        super().keyPressEvent(event)
