"""Obsidian Bases in the vault tree: one item per `.base` file, under its vault, after the folders.

Choosing one scopes the search to the Base's rows (`desktop.base_scope`). Kept apart from
`desktop.models.VaultTreeModel`, which builds the folders: the Base items are added to the
vault items it made.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

from desktop.models import FolderRole, VaultRole
from desktop.state import VaultSnapshot

BaseRole = Qt.ItemDataRole.UserRole + 4


def add_base_items(model: QStandardItemModel, snapshots: tuple[VaultSnapshot, ...]) -> None:
    """Append each vault's Bases to its item (the model was just rebuilt)."""
    by_name = {s.name: s for s in snapshots}
    for row in range(model.rowCount()):
        top = model.item(row)
        snap = by_name.get(str(top.data(VaultRole)))
        if snap is None:
            continue
        for rel in snap.bases:
            name = rel.rsplit("/", 1)[-1].removesuffix(".base")
            item = QStandardItem(f"▦ {name}")
            item.setEditable(False)
            item.setData(snap.name, VaultRole)
            item.setData("", FolderRole)
            item.setData(rel, BaseRole)
            item.setToolTip(f"Base {rel}: search only its rows; an empty query lists them in its order")
            item.setData(f"Base {name}", Qt.ItemDataRole.AccessibleTextRole)
            top.appendRow(item)


def find_base_item(model: QStandardItemModel, vault: str, base: str) -> QModelIndex:
    for row in range(model.rowCount()):
        top = model.item(row)
        if str(top.data(VaultRole)) != vault:
            continue
        for i in range(top.rowCount()):
            child = top.child(i)
            if str(child.data(BaseRole) or "") == base:
                return child.index()
    return QModelIndex()
