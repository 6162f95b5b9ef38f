"""The vault check-up: its findings grouped by kind; double-click opens the note (at the line).

The check-up reads the link graph and, for the meaning-based checks, every note's vectors:
it runs on a thread of its own and the dialog fills in when it is done. Nothing is written.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core.structured.checkup import CheckItem, Checkup, vault_checkup
from desktop.controller import AppController
from desktop.workers import user_message

TITLES = {
    "broken_link": "Broken links",
    "orphan": "Orphan notes",
    "unlinked_similar": "Similar, but not linked",
    "near_duplicate": "Near-duplicates",
    "inconsistent_property": "Properties with mixed types",
}


class _Relay(QObject):
    """Carries the worker thread's result to the GUI thread (a queued signal)."""

    done = Signal(object)
    failed = Signal(str)


class CheckupDialog(QDialog):
    def __init__(self, controller: AppController, vault: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.vault = vault
        self.checkup: Checkup | None = None
        self.setWindowTitle(f"Check-up — {vault}")
        self.resize(900, 560)
        self.summary = QLabel("Checking…", self)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Note", "Finding"])
        self.tree.setAccessibleName("Check-up findings")
        self.tree.setColumnWidth(0, 320)
        self.tree.itemDoubleClicked.connect(lambda item, _col: self.open_item(item))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        layout.addWidget(buttons)
        self._relay = _Relay(self)
        self._relay.done.connect(self.show_result)
        self._relay.failed.connect(self.summary.setText)
        self._thread = threading.Thread(target=self._run, name="checkup", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            result = vault_checkup(self._controller.engine, self.vault)
        except Exception as exc:  # noqa: BLE001 - said in the dialog, never a dead thread
            self._relay.failed.emit(user_message(exc))
        else:
            self._relay.done.emit(result)

    def wait(self, seconds: float = 60.0) -> None:
        """Block until the check-up thread ends (tests)."""
        self._thread.join(seconds)

    def show_result(self, result: Checkup) -> None:
        self.checkup = result
        self.tree.clear()
        for kind, title in TITLES.items():
            found = result.of(kind)
            group = QTreeWidgetItem(self.tree, [f"{title} ({len(found)})", ""])
            for item in found:
                where = f"{item.rel_path}:{item.line}" if item.line else item.rel_path
                child = QTreeWidgetItem(group, [where, item.message])
                child.setData(0, 256, item)
                for p in item.detail.get("passages", []):
                    QTreeWidgetItem(child, [p["rel_path"], p.get("text", "")]).setData(0, 256, CheckItem(kind, p["rel_path"]))
            group.setExpanded(bool(found) and len(found) <= 20)
        counts = ", ".join(f"{TITLES[k].lower()} {len(result.of(k))}" for k in TITLES)
        self.summary.setText(" ".join([counts, *result.notes]))

    def open_item(self, item: QTreeWidgetItem) -> None:
        found = item.data(0, 256)
        if not isinstance(found, CheckItem):
            return
        snap = self._controller.vault_snapshot(self.vault)
        if snap is not None:
            self._controller.actions.open_in_editor(snap.root, found.rel_path, found.line or 1, self._controller.settings.editor_command)
