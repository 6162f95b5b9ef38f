"""A Base chosen in the tree: its rows (the view's filters run over the vault snapshot) and their order.

The tree's Base node scopes searches to the Base's rows; with an empty query the results
list shows those rows in the Base's own order (its groupBy, sort and columns). What the
Base holds that Cairn cannot run is said in the status line, never silently dropped.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from core.base.models import SearchResponse
from core.search.bases import BaseFileError, load_base, run_base
from desktop.app_state import Scope
from desktop.state import VaultSnapshot


class _Control(Protocol):
    """What this needs of the query controller (not imported: it imports this module)."""

    message: Any  # a Signal(str)

    def vault_snapshot(self, name: str) -> VaultSnapshot | None: ...


def base_rows(control: _Control, scope: Scope) -> list[str]:
    """The rows of the Base in `scope`, in its order ([] when it cannot be read: the reason is shown)."""
    snap = control.vault_snapshot(scope.vault)
    if snap is None:
        return []
    try:
        view = run_base(load_base(Path(snap.root) / scope.base), snap.files, base=scope.base, root=Path(snap.root))
    except BaseFileError as exc:
        control.message.emit(f"Base {scope.base}: {exc}")
        return []
    if view.problems:
        control.message.emit(f"Base {scope.base}: {len(view.problems)} part(s) not supported — " + "; ".join(view.problems[:2]))
    return [r.rel_path for r in view.rows]


def in_base_order(response: SearchResponse, order: list[str]) -> SearchResponse:
    """The response's hits in the Base's row order (one per note)."""
    rank = {rel: i for i, rel in enumerate(order)}
    hits = sorted(response.hits, key=lambda h: rank.get(h.chunk.rel_path, len(rank)))
    return replace(response, hits=tuple(hits))
