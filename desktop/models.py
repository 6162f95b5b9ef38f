"""Qt item models over the engine's results and snapshots; they hold data, never fetch it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QStandardItem, QStandardItemModel

from core.base.models import Hit, HitKind
from core.base.vault_state import VaultProgress, short_state
from desktop.dotted_names import dotted_nodes
from desktop.formatting import heading_trail, snippet_plain
from desktop.state import HealthRow, VaultSnapshot

VaultRole = Qt.ItemDataRole.UserRole + 1
FolderRole = Qt.ItemDataRole.UserRole + 2
CountRole = Qt.ItemDataRole.UserRole + 3
PrefixRole = Qt.ItemDataRole.UserRole + 5  # a dotted-name node's path prefix ("a.b."); +4 is base_items.BaseRole
HitRole = Qt.ItemDataRole.UserRole + 10
ScoreFractionRole = Qt.ItemDataRole.UserRole + 11
MoreRole = Qt.ItemDataRole.UserRole + 12  # (further passages in the note, expanded?) or None for a passage row
DividerRole = Qt.ItemDataRole.UserRole + 13  # True on the first "related notes" row: a divider is drawn above it
RowRole = Qt.ItemDataRole.UserRole + 20

Index = QModelIndex | QPersistentModelIndex


class VaultTreeModel(QStandardItemModel):
    """Vaults and their folders, each with the number of notes below it."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setHorizontalHeaderLabels(["Vaults"])
        self._shown: tuple[tuple[str, str, tuple[tuple[str, int], ...], bool], ...] = ()
        self.dotted = True  # Dendron-style `a.b.c.md` names as a hierarchy where most names are dotted

    def set_snapshots(self, snapshots: tuple[VaultSnapshot, ...]) -> bool:
        """Show these vaults; False (and nothing touched) when names, folders and counts are as shown.

        Most snapshots (a note saved, embedding progress) change nothing the tree
        shows; rebuilding anyway would reset the view's expanded folders and scroll.
        """
        counted = [(snap, snap.folder_counts()) for snap in snapshots]
        shown = tuple((snap.name, snap.root, tuple(sorted(counts.items())), self.dotted) for snap, counts in counted)
        if shown == self._shown and self.rowCount() == len(shown):
            return False
        self._shown = shown
        self.clear()
        self.setHorizontalHeaderLabels(["Vaults"])
        for snap, counts in counted:
            top = self._item(snap.name, snap.name, "", counts[""])
            top.setToolTip(snap.root)
            nodes: dict[str, QStandardItem] = {"": top}
            for folder in sorted(k for k in counts if k):
                parent_key, _, leaf = folder.rpartition("/")
                item = self._item(leaf, snap.name, folder, counts[folder])
                nodes[parent_key].appendRow(item)
                nodes[folder] = item
            if self.dotted:
                self._add_dotted(snap, nodes)
            self.appendRow(top)
        return True

    def _add_dotted(self, snap: VaultSnapshot, folders: dict[str, QStandardItem]) -> None:
        """Dotted-name nodes under the folders whose names are mostly dotted (desktop.dotted_names)."""
        made: dict[str, QStandardItem] = {}
        for node in dotted_nodes(snap.files):
            item = self._item(node.label, snap.name, node.folder, node.count)
            item.setData(node.prefix, PrefixRole)
            item.setToolTip(f"Notes named {node.prefix.rsplit('/', 1)[-1]}* (a dotted hierarchy)")
            (made.get(node.parent_prefix) if node.parent_prefix else folders[node.folder]).appendRow(item)  # type: ignore[union-attr]
            made[node.prefix] = item

    def set_states(self, progress: dict[str, VaultProgress]) -> None:
        """Each vault row says its state ("embedding 43%") beside its count, as the status bar does."""
        for row in range(self.rowCount()):
            item = self.item(row)
            vault = str(item.data(VaultRole))
            p = progress.get(vault)
            state = short_state(p) if p is not None else ""
            count = int(item.data(CountRole) or 0)
            text = f"{vault}  ({count})" + (f" · {state}" if state else "")
            if item.text() != text:
                item.setText(text)
                item.setToolTip(p.sentence() if p is not None else vault)

    def nodes(self) -> Iterator[QStandardItem]:
        """Every vault and folder item, parents before children."""
        stack = [self.item(row) for row in reversed(range(self.rowCount()))]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.child(i) for i in reversed(range(node.rowCount())))

    @staticmethod
    def key(item: QStandardItem) -> tuple[str, str]:
        """(vault, folder) of an item ('' for the vault itself); a dotted node's prefix ("a.b.") instead of its folder."""
        return str(item.data(VaultRole)), str(item.data(PrefixRole) or item.data(FolderRole) or "")

    @staticmethod
    def _item(label: str, vault: str, folder: str, count: int) -> QStandardItem:
        item = QStandardItem(f"{label}  ({count})")
        item.setEditable(False)
        item.setData(vault, VaultRole)
        item.setData(folder, FolderRole)
        item.setData(count, CountRole)
        noun = "note" if count == 1 else "notes"
        item.setData(f"{label}, {count} {noun}", Qt.ItemDataRole.AccessibleTextRole)
        return item

    def find(self, vault: str, folder: str = "") -> QModelIndex:
        """The index of a vault or folder, or an invalid index."""
        return next((node.index() for node in self.nodes() if self.key(node) == (vault, folder)), QModelIndex())


class ResultsModel(QAbstractListModel):
    """The hits of the newest search, one row per note; a note's further passages expand beneath it.

    Rows are the search's hits in rank order; after :meth:`toggle_more` on a
    row, that hit's ``more`` passages follow it as indented rows until toggled
    again. A new search collapses everything.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._hits: tuple[Hit, ...] = ()
        self._rows: list[tuple[Hit, bool]] = []  # (hit, is a folded passage of the note above)
        self._expanded: set[int] = set()  # positions in _hits
        self._top = 1.0

    def set_hits(self, hits: tuple[Hit, ...]) -> None:
        self.beginResetModel()
        self._hits = hits
        self._expanded = set()
        self._rows = [(h, False) for h in hits]
        self._top = max((h.score for h in hits), default=0.0) or 1.0
        self.endResetModel()

    def hit(self, row: int) -> Hit | None:
        return self._rows[row][0] if 0 <= row < len(self._rows) else None

    def is_passage(self, row: int) -> bool:
        """True for a folded passage shown under its note's row."""
        return 0 <= row < len(self._rows) and self._rows[row][1]

    def row_of(self, hit: Hit | None) -> int:
        for row, (h, _) in enumerate(self._rows):
            if h is hit:
                return row
        return -1

    def toggle_more(self, row: int) -> bool:
        """Show or hide the further passages of the note on `row`; False if it has none."""
        hit = self.hit(row)
        if hit is None or self.is_passage(row) or not hit.more:
            return False
        pos = self._hits.index(hit)
        if pos in self._expanded:
            self.beginRemoveRows(QModelIndex(), row + 1, row + len(hit.more))
            del self._rows[row + 1 : row + 1 + len(hit.more)]
            self._expanded.discard(pos)
            self.endRemoveRows()
        else:
            self.beginInsertRows(QModelIndex(), row + 1, row + len(hit.more))
            self._rows[row + 1 : row + 1] = [(m, True) for m in hit.more]
            self._expanded.add(pos)
            self.endInsertRows()
        self.dataChanged.emit(self.index(row), self.index(row), [MoreRole])
        return True

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        hit = self.hit(index.row()) if index.isValid() else None
        if hit is None:
            return None
        passage = self.is_passage(index.row())
        if role == Qt.ItemDataRole.DisplayRole:
            return hit.title
        if role == HitRole:
            return hit
        if role == MoreRole:
            return None if passage else (len(hit.more), self._hits.index(hit) in self._expanded)
        if role == DividerRole:
            return not passage and hit.kind == HitKind.RELATED and self._first_related() is hit
        if role == ScoreFractionRole:
            return max(0.0, min(1.0, hit.score / self._top))
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{hit.chunk.vault}/{hit.chunk.rel_path} — score {hit.score:.5f}"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            trail = heading_trail(hit.chunk.heading_path, hit.title)
            where = f", section {trail}" if trail else ""
            if passage:
                return f"Another passage of {hit.title}{where}. {snippet_plain(hit.snippet)}"
            more = f" {len(hit.more)} more passages in this note." if hit.more else ""
            kind = "Related note" if hit.kind == HitKind.RELATED else "Result"
            return f"{kind} {self._hits.index(hit) + 1}: {hit.title}{where}. {snippet_plain(hit.snippet)}{more}"
        return None

    def _first_related(self) -> Hit | None:
        return next((h for h in self._hits if h.kind == HitKind.RELATED), None)


class HealthModel(QAbstractTableModel):
    """Every file of every vault with its indexing state, for the health dialog."""

    HEADERS = ("State", "Vault", "File", "Reason", "Detail")

    def __init__(self, rows: list[HealthRow], parent: Any = None) -> None:
        super().__init__(parent)
        self._rows = rows

    def set_rows(self, rows: list[HealthRow]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def row_data(self, row: int) -> HealthRow:
        return self._rows[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if role == RowRole:
            return row
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return (row.state, row.vault, row.rel_path, row.reason, row.detail)[index.column()]
        return None


class HealthFilterProxy(QSortFilterProxyModel):
    """Filters the health table by state and by a text match on path, reason or detail."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._state = ""
        self._text = ""

    def set_state(self, state: str) -> None:
        self.beginFilterChange()
        self._state = state
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def set_text(self, text: str) -> None:
        self.beginFilterChange()
        self._text = text.strip().lower()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        if not isinstance(model, HealthModel):
            return True
        row = model.row_data(source_row)
        if self._state and row.state != self._state:
            return False
        if self._text:
            haystack = f"{row.vault}/{row.rel_path} {row.reason} {row.detail}".lower()
            return self._text in haystack
        return True
