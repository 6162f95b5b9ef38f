"""Settings › Agents: the shared MCP server (on/off, port, state), the agents and their tokens,
and what they read (the audit log, per client, newest first, filtered by note).

The switch acts at once (starting a server is the point of the page) and is
remembered on OK. A new agent's token is shown once, in a read-only field with
a Copy button; only its hash is kept. The log is read on a worker thread and
polled, so a large log never stalls the window.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.agents.audit import AuditEntry, AuditLog
from core.agents.scope import Area, Scope, parse_folder, parse_tools
from core.agents.tokens import AgentStore
from core.base.errors import CairnError
from desktop.controller import AppController
from desktop.dialogs.settings_pages import SettingsDraft, SettingsPanelBase, spin_box

ALL_CLIENTS = "All agents"
LOG_LIMIT = 200
_reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-audit-read")


class AgentsSettingsPanel(SettingsPanelBase):
    title = "Agents"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        self.server = controller.agents
        self.store = AgentStore(controller.paths)
        self.audit = AuditLog(controller.paths)
        self._pending: Future[list[AuditEntry]] | None = None
        layout = QVBoxLayout(self)
        layout.addWidget(self._server_box())
        layout.addWidget(self._agents_box())
        layout.addWidget(self._log_box(), 2)
        self.server.changed.connect(self._show_state)
        self._poll = QTimer(self)
        self._poll.setInterval(100)
        self._poll.timeout.connect(self._collect_log)
        self._show_state()
        self.refresh_agents()
        self.refresh_log()

    # -- the server ------------------------------------------------------------------------

    def _server_box(self) -> QGroupBox:
        box = QGroupBox("Server", self)
        self.enabled = QCheckBox("Serve my notes to AI agents on this computer (MCP over HTTP, 127.0.0.1 only)")
        self.port = spin_box(1024, 65535, name="Port")
        self.state_label = QLabel()
        self.state_label.setAccessibleName("Server state")
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.enabled.toggled.connect(self._toggle)
        form = QFormLayout(box)
        form.addRow(self.enabled)
        form.addRow("Port", self.port)
        form.addRow("State", self.state_label)
        return box

    def _toggle(self, on: bool) -> None:
        if on:
            self.server.start(self.port.value())
        else:
            self.server.stop()
        self._show_state()

    def _show_state(self) -> None:
        self.state_label.setText(self.server.describe())
        if self.server.state == "failed" and self.enabled.isChecked():  # e.g. the port is taken
            self.enabled.blockSignals(True)
            self.enabled.setChecked(False)
            self.enabled.blockSignals(False)

    # -- agents and tokens -------------------------------------------------------------------

    def _agents_box(self) -> QGroupBox:
        box = QGroupBox("Agents", self)
        self.table = QTableWidget(0, 3, box)
        self.table.setHorizontalHeaderLabels(["Name", "May read", "Since"])
        self.table.setAccessibleName("Agents")
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setMaximumHeight(120)
        _fit_columns(self.table, stretch=1)
        self.new_name = QLineEdit(placeholderText="name, e.g. claude-desktop")
        self.new_where = QLineEdit(placeholderText="vaults or vault/folder, comma-separated (empty: all)")
        self.new_tools = QLineEdit(placeholderText="search,fetch,ask,links,related,vaults,checkup (empty: all)")
        self.new_internal = QCheckBox("may see internal notes")
        self.add_button = QPushButton("Add agent")
        self.revoke_button = QPushButton("Revoke selected")
        self.token = QLineEdit(readOnly=True, placeholderText="a new agent's token appears here, once")
        self.token.setAccessibleName("New token")
        self.copy_button = QPushButton("Copy")
        self.add_button.clicked.connect(self.add_agent)
        self.revoke_button.clicked.connect(self.revoke_selected)
        self.copy_button.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.token.text()))
        form = QFormLayout()
        form.addRow("Name", self.new_name)
        form.addRow("May read", self.new_where)
        form.addRow("Tools", self.new_tools)
        form.addRow("", self.new_internal)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.revoke_button)
        buttons.addStretch(1)
        token_row = QHBoxLayout()
        token_row.addWidget(QLabel("New token (shown once):"))
        token_row.addWidget(self.token, 1)
        token_row.addWidget(self.copy_button)
        layout = QVBoxLayout(box)
        layout.addWidget(self.table)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addLayout(token_row)
        return box

    def refresh_agents(self) -> None:
        try:
            agents = self.store.agents()
        except CairnError as exc:
            self._controller.message.emit(str(exc))
            agents = []
        self.table.setRowCount(len(agents))
        for row, agent in enumerate(agents):
            for col, text in enumerate((agent.name, agent.scope.describe(), agent.created)):
                self.table.setItem(row, col, QTableWidgetItem(text))
        names = [ALL_CLIENTS] + [a.name for a in agents]
        current = self.client_filter.currentText()
        self.client_filter.blockSignals(True)
        self.client_filter.clear()
        self.client_filter.addItems(names)
        self.client_filter.setCurrentText(current if current in names else ALL_CLIENTS)
        self.client_filter.blockSignals(False)

    def add_agent(self) -> None:
        known = [v.name for v in self._controller.vaults]
        try:
            areas: list[Area] = []
            for part in (p.strip() for p in self.new_where.text().split(",") if p.strip()):
                areas.append(Area(part) if part in known else parse_folder(part, known))
            tools = parse_tools(self.new_tools.text().strip() or None)
            agent, token = self.store.add(self.new_name.text().strip(), Scope(areas=tuple(areas), tools=tools, internal=self.new_internal.isChecked()))
        except (ValueError, CairnError) as exc:
            QMessageBox.warning(self, "Agent not added", str(exc))
            return
        self.token.setText(token)  # the only time it is shown
        self.new_name.clear()
        self.refresh_agents()

    def revoke_selected(self) -> None:
        rows = {i.row() for i in self.table.selectedIndexes()}
        for row in sorted(rows):
            item = self.table.item(row, 0)
            if item is not None:
                try:
                    self.store.revoke(item.text())
                except CairnError as exc:
                    QMessageBox.warning(self, "Not revoked", str(exc))
        self.refresh_agents()

    # -- the audit log -----------------------------------------------------------------------

    def _log_box(self) -> QGroupBox:
        box = QGroupBox("What agents read (newest first)", self)
        self.client_filter = QComboBox(box)
        self.client_filter.setAccessibleName("Agent")
        self.client_filter.addItem(ALL_CLIENTS)
        self.note_filter = QLineEdit(placeholderText="only calls that returned this note (part of its path)")
        self.note_filter.setAccessibleName("Note filter")
        refresh = QPushButton("Refresh")
        self.log_table = QTableWidget(0, 5, box)
        self.log_table.setHorizontalHeaderLabels(["Time", "Agent", "Tool", "Asked", "Returned"])
        self.log_table.setAccessibleName("Audit log")
        self.log_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.log_table.setMinimumHeight(160)
        _fit_columns(self.log_table, stretch=4)
        self.client_filter.currentTextChanged.connect(lambda _t: self.refresh_log())
        self.note_filter.returnPressed.connect(self.refresh_log)
        refresh.clicked.connect(self.refresh_log)
        row = QHBoxLayout()
        row.addWidget(self.client_filter)
        row.addWidget(self.note_filter, 1)
        row.addWidget(refresh)
        layout = QVBoxLayout(box)
        layout.addLayout(row)
        layout.addWidget(self.log_table, 1)
        return box

    def refresh_log(self) -> None:
        """Read the log on a worker thread; `_collect_log` shows it when ready."""
        client = self.client_filter.currentText()
        who = None if client in ("", ALL_CLIENTS) else client
        note = self.note_filter.text().strip() or None
        self._pending = _reader.submit(self.audit.entries, client=who, note=note, limit=LOG_LIMIT)
        self._poll.start()

    def _collect_log(self) -> None:
        if self._pending is None or not self._pending.done():
            return
        self._poll.stop()
        future, self._pending = self._pending, None
        try:
            entries = future.result()
        except OSError as exc:
            self._controller.message.emit(f"cannot read the agents' log: {exc}")
            return
        self.show_log(entries)

    def show_log(self, entries: list[AuditEntry]) -> None:
        self.log_table.setRowCount(len(entries))
        for row, e in enumerate(entries):
            returned = ", ".join(e.refs) if e.outcome == "ok" else e.outcome
            for col, text in enumerate((e.time.replace("T", " ")[:19], e.client, e.tool, e.query, returned)):
                self.log_table.setItem(row, col, QTableWidgetItem(text))

    # -- settings --------------------------------------------------------------------------

    def load(self, draft: SettingsDraft) -> None:
        self.port.setValue(draft.app.agents_port)
        self.enabled.blockSignals(True)
        self.enabled.setChecked(self.server.state in ("running", "starting"))
        self.enabled.blockSignals(False)
        self.token.clear()
        self._show_state()

    def save(self, draft: SettingsDraft) -> None:
        draft.app = replace(draft.app, agents_server=self.enabled.isChecked(), agents_port=self.port.value())


def _fit_columns(table: QTableWidget, *, stretch: int) -> None:
    """Columns as wide as their text, one column taking the rest."""
    header = table.horizontalHeader()
    for col in range(table.columnCount()):
        mode = QHeaderView.ResizeMode.Stretch if col == stretch else QHeaderView.ResizeMode.ResizeToContents
        header.setSectionResizeMode(col, mode)
