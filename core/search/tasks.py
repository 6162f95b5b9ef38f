"""Tasks as search results: the task lines of a vault, filtered like a search.

The query uses the query box's language. Its words must all appear in the task (its text,
heading or note title); `task:open`/`task:done` pick a state; a date filter on a task date
(`due<2026-12-01`, `scheduled>=…`, `has:due`) applies to the task itself; every other filter
(`project:Launch`, `folder:`, `tag:`) applies to the note the task is in, as in a search.
Read from the manifest: listing tasks reads no note.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from core.base.models import SearchFilters
from core.base.structured import Op, PropertyFilter, Task
from core.index.filters import record_matches
from core.index.manifest import FileRecord
from core.index.property_terms import TASK_KEY, terms_match
from core.search.query import parse_query

TASK_DATES = ("due", "scheduled", "start", "created", "done", "cancelled")
_PRIORITY_ORDER = {"highest": 0, "high": 1, "medium": 2, "normal": 3, "low": 4, "lowest": 5}


@dataclass(frozen=True, slots=True)
class TaskHit:
    """One task with the note it is in."""

    vault: str
    rel_path: str
    title: str
    task: Task


def find_tasks(
    vault: str,
    files: Mapping[str, FileRecord],
    query: str = "",
    *,
    state: str | None = None,
    due_before: str | None = None,
    filters: SearchFilters = SearchFilters(),
    limit: int | None = None,
) -> tuple[list[TaskHit], tuple[str, ...]]:
    """Tasks matching `query` (and `state` "open"/"done", `due_before` inclusive), soonest due first.

    Returns the tasks and the query's warnings (a filter it could not read).
    """
    parsed = parse_query(query, filters)
    task_filters, state = _task_filters(parsed.query.filters.where, state)
    if due_before:
        task_filters.append(PropertyFilter("due", Op.LE, due_before))
    note_filters = replace(parsed.query.filters, where=tuple(f for f in parsed.query.filters.where if not _is_task_filter(f)))
    words = [w.lower() for w in parsed.query.terms + parsed.query.phrases]
    hits: list[TaskHit] = []
    for rel, rec in files.items():
        if not rec.tasks or not record_matches(rel, rec, note_filters):
            continue
        for task in rec.tasks:
            if state is not None and task.status.is_open != (state == "open"):
                continue
            if not all(terms_match(task_terms(task), f) for f in task_filters):
                continue
            haystack = f"{task.text} {task.heading} {rec.title}".lower()
            if all(w in haystack for w in words):
                hits.append(TaskHit(vault, rel, rec.title, task))
    hits.sort(key=lambda h: (h.task.due or "9999", _PRIORITY_ORDER.get(h.task.priority, 3), h.rel_path, h.task.line))
    return (hits[:limit] if limit else hits), parsed.warnings


def _is_task_filter(flt: PropertyFilter) -> bool:
    return flt.key in TASK_DATES or flt.key in (TASK_KEY, "priority")


def _task_filters(where: tuple[PropertyFilter, ...], state: str | None) -> tuple[list[PropertyFilter], str | None]:
    out = []
    for flt in where:
        if flt.key == TASK_KEY:
            state = flt.value if not flt.negate else ("done" if flt.value == "open" else "open")
        elif _is_task_filter(flt):
            out.append(flt)
    return out, state


def task_terms(task: Task) -> frozenset[str]:
    """A task's dates and priority spelled as property terms, so property filters test them."""
    terms = {"priority", f"priority=t:{task.priority}"}
    for name in TASK_DATES:
        day = getattr(task, name)
        if day:
            terms.update((name, f"{name}=d:{day}"))
    return frozenset(terms)
