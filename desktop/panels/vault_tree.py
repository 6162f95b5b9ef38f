"""The vault and folder tree: selecting a node scopes the search to it."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from PySide6.QtCore import QItemSelection, QPoint, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QMenu, QMessageBox, QPushButton, QTreeView, QVBoxLayout, QWidget

from desktop.controller import AppController, Scope
from desktop.models import FolderRole, PrefixRole, VaultRole, VaultTreeModel
from desktop.panels.base_items import BaseRole, add_base_items, find_base_item
from desktop.state import VaultSnapshot


class VaultTreePanel(QWidget):
    """Left side of the window.

    Signals:
        addRequested: The user asked to add a folder as a vault (the window shows the picker).
    """

    addRequested = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.model = VaultTreeModel(self)
        self.view = QTreeView(self)
        self.view.setModel(self.model)
        self.view.setHeaderHidden(True)
        self.view.setAccessibleName("Vaults and folders")
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.view.selectionModel().selectionChanged.connect(self._on_selection)
        self.add_button = QPushButton("Add folder…", self)
        self.add_button.setAccessibleName("Add a folder of notes as a vault")
        self.add_button.clicked.connect(self.addRequested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 0, 6)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.add_button)
        controller.snapshotChanged.connect(self._on_snapshot)
        controller.scopeChanged.connect(self._select_scope)
        controller.board.changed.connect(self.model.set_states)
        controller.settingsChanged.connect(lambda _s: self._on_snapshot(controller.snapshot))
        self._on_snapshot(controller.snapshot)

    def _on_snapshot(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        """Rebuild only when counts changed, keeping what the user opened and where they scrolled."""
        self.model.dotted = self._controller.settings.dotted_hierarchy
        nodes = list(self.model.nodes())
        expanded = {self.model.key(n) for n in nodes if self.view.isExpanded(n.index())}
        known = {self.model.key(n)[0] for n in nodes}
        scroll = self.view.verticalScrollBar().value()
        self.view.selectionModel().blockSignals(True)
        try:
            if not self.model.set_snapshots(snapshots):
                return
            add_base_items(self.model, snapshots)
            self.model.set_states(self._controller.board.all())
            for node in self.model.nodes():
                vault, folder = key = self.model.key(node)
                if key in expanded or (not folder and vault not in known):  # a new vault opens once
                    self.view.expand(node.index())
            self.view.verticalScrollBar().setValue(scroll)
        finally:
            self.view.selectionModel().blockSignals(False)
        self._select_scope(self._controller.scope)

    def _select_scope(self, scope: Scope | None) -> None:
        selection = self.view.selectionModel()
        selection.blockSignals(True)
        try:
            index = None
            if scope is not None:
                index = find_base_item(self.model, scope.vault, scope.base) if scope.base else self.model.find(scope.vault, scope.prefix or scope.folder)
            if index is not None and index.isValid():
                self.view.setCurrentIndex(index)
            else:
                selection.clearSelection()
        finally:
            selection.blockSignals(False)

    def _on_selection(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if not indexes:
            self._controller.set_scope(None)
            return
        index = indexes[0]
        base = str(index.data(BaseRole) or "")
        prefix = str(index.data(PrefixRole) or "")
        self._controller.set_scope(Scope(str(index.data(VaultRole)), "" if base else str(index.data(FolderRole) or ""), base, prefix=prefix))

    def select(self, vault: str, folder: str = "") -> None:
        """Select a node as if clicked (tests and keyboard users); `folder` may be a dotted prefix ("a.b.")."""
        index = self.model.find(vault, folder)
        if index.isValid():
            self.view.setCurrentIndex(index)

    def _menu(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        if not index.isValid():
            return
        vault = str(index.data(VaultRole))
        folder = str(index.data(FolderRole) or "")
        snap = self._controller.vault_snapshot(vault)
        menu = QMenu(self)
        if snap is not None:
            path = Path(snap.root) / PurePosixPath(folder) if folder else Path(snap.root)
            menu.addAction("Open folder", lambda: self._controller.actions.open_path(path))
        menu.addAction("Re-index vault", lambda: self._controller.index([vault]))
        menu.addSeparator()
        menu.addAction("Remove vault…", lambda: self._confirm_remove(vault))
        menu.exec(self.view.viewport().mapToGlobal(pos))

    def _confirm_remove(self, vault: str) -> None:
        answer = QMessageBox.question(
            self,
            "Remove vault",
            f"Stop indexing “{vault}”? Its notes stay where they are; only Cairn's index is forgotten.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._controller.remove_vault(vault)
