"""Properties and tasks across the chosen vaults, and their JSON shapes (CLI, MCP, app)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.base.confidentiality import is_restricted
from core.base.errors import IndexNotBuiltError
from core.base.models import SearchFilters
from core.index.manifest import FileRecord
from core.index.property_stats import KeyStats, property_stats
from core.search.tasks import TaskHit, find_tasks

if TYPE_CHECKING:
    from core.engine import Engine


def vault_files(engine: Engine, names: Sequence[str] = ()) -> list[tuple[str, dict[str, FileRecord]]]:
    """(vault, manifest) of each named vault (all when none), restricted notes left out.

    Raises:
        IndexNotBuiltError: no vault has an index yet.
    """
    chosen = [engine.vault(n).name for n in names] if names else [v.name for v in engine.vaults]
    out = []
    for name in chosen:
        vi = engine.index_for(name)
        if vi.is_built:
            out.append((name, {rel: rec for rel, rec in vi.files.items() if not is_restricted(rec.confidentiality)}))
    if not out:
        raise IndexNotBuiltError("No vaults indexed yet — run `cairn index --vault PATH` first")
    return out


def vault_properties(engine: Engine, key: str | None = None, vaults: Sequence[str] = ()) -> list[KeyStats]:
    """The keys in use across the vaults (or one key's values), counts summed."""
    merged: dict[str, FileRecord] = {}
    for name, files in vault_files(engine, vaults):
        merged.update({f"{name}\x1f{rel}": rec for rel, rec in files.items()})
    return property_stats(merged, key)


@dataclass(frozen=True, slots=True)
class TaskQuery:
    query: str = ""
    state: str | None = None  # "open" | "done" | None for both
    due_before: str | None = None
    filters: SearchFilters = SearchFilters()
    limit: int | None = None


def vault_tasks(engine: Engine, request: TaskQuery) -> tuple[list[TaskHit], tuple[str, ...]]:
    """Tasks across the request's vaults (`filters.vaults`, all when empty), soonest due first."""
    hits: list[TaskHit] = []
    warnings: tuple[str, ...] = ()
    for name, files in vault_files(engine, request.filters.vaults):
        found, warnings = find_tasks(name, files, request.query, state=request.state, due_before=request.due_before, filters=request.filters)
        hits.extend(found)
    hits.sort(key=lambda h: (h.task.due or "9999", h.vault, h.rel_path, h.task.line))
    return (hits[: request.limit] if request.limit else hits), warnings


def properties_json(stats: list[KeyStats]) -> list[dict[str, Any]]:
    return [
        {
            "key": s.key,
            "notes": s.notes,
            "types": [{"type": t, "notes": n} for t, n in s.types],
            "values": [{"value": v, "notes": n} for v, n in s.values],
        }
        for s in stats
    ]


def task_json(hit: TaskHit) -> dict[str, Any]:
    t = hit.task
    out: dict[str, Any] = {
        "vault": hit.vault,
        "rel_path": hit.rel_path,
        "title": hit.title,
        "line": t.line,
        "status": t.status.value,
        "symbol": t.symbol,
        "text": t.text,
        "heading": t.heading,
        "priority": t.priority,
    }
    for name in ("due", "scheduled", "start", "created", "done", "cancelled"):
        out[name] = getattr(t, name)
    out["ref"] = f"{hit.vault}/{hit.rel_path}:{t.line}"
    return out
