"""The filter bar's property facet: the keys in use with their note counts, and each key's values.

Built from the vault snapshots the window already holds (their manifests carry every note's
typed property terms), when the menu opens, for the vault in scope or every vault. Picking
a value adds `key:value` to the query; picking "has" adds `has:key`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from core.index.manifest import FileRecord
from core.index.property_stats import property_stats
from desktop.state import VaultSnapshot

MAX_KEYS = 40
MAX_VALUES = 30


def spelled_filter(key: str, value: str) -> str:
    """`key:value` as the query box reads it (quoted when the value has spaces)."""
    return f'{key}:"{value}"' if any(c.isspace() for c in value) else f"{key}:{value}"


class PropertyFacetButton(QToolButton):
    """"Properties ▾": keys (with note counts) → has / values (with counts); a pick emits the filter text.

    Signals:
        filterPicked: The filter to add to the query (`status:draft`, `has:due`).
    """

    filterPicked = Signal(str)

    def __init__(self, snapshots: Callable[[], tuple[VaultSnapshot, ...]], scope_vault: Callable[[], str | None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._snapshots = snapshots
        self._scope_vault = scope_vault
        self.setText("Properties")
        self.setAccessibleName("Property filter")
        self.setToolTip("Filter by a front-matter property: keys in use, then their values")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMenu(QMenu(self))
        self.menu().aboutToShow.connect(self.rebuild)

    def files(self) -> dict[str, FileRecord]:
        scope = self._scope_vault()
        out: dict[str, FileRecord] = {}
        for snap in self._snapshots():
            if scope is None or snap.name == scope:
                out.update({f"{snap.name}\x1f{rel}": rec for rel, rec in snap.files.items()})
        return out

    def rebuild(self) -> None:
        menu = self.menu()
        menu.clear()
        stats = property_stats(self.files(), max_values=MAX_VALUES)
        if not stats:
            menu.addAction("No properties in these notes").setEnabled(False)
            return
        for s in stats[:MAX_KEYS]:
            sub = menu.addMenu(f"{s.key}  ({s.notes})")
            sub.addAction(f"has {s.key}  ({s.notes})", self._emitter(f"has:{s.key}"))
            sub.addSeparator()
            for value, count in s.values:
                sub.addAction(f"{value}  ({count})", self._emitter(spelled_filter(s.key, value)))

    def _emitter(self, text: str) -> Callable[[], None]:
        return lambda: self.filterPicked.emit(text)
