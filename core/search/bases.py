"""Obsidian Bases (`.base` files): a saved, filtered view of a vault's notes, read and run.

A Base is YAML: global `filters`, `formulas`, and `views`, each with its own `filters`,
`order` (its columns), `sort`, `groupBy` and `limit`. Cairn runs a view over the index's
notes (the manifest: properties, tags, dates — no note is read), which gives the view's
rows; the app and `cairn base` list them, and a search can be scoped to them
(`SearchFilters.paths`). What Cairn cannot run — an unknown function, date arithmetic,
summaries — is reported by name in `BaseView.problems` and the statement is left out,
never silently taken as true or false. Presentation settings (column sizes, card images,
display names) change no rows and are not needed.
"""

from __future__ import annotations

import ast
import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.index.manifest import FileRecord
from core.index.property_terms import TASK_KEY, decode_term
from core.search.base_expr import Evaluator, Row, Unsupported, as_date, compile_expression, norm

MAX_BASE_BYTES = 1_000_000
_NOT_RUN = ("summaries",)  # top-level or view keys that compute values Cairn does not show


class BaseFileError(ValueError):
    """A `.base` file that cannot be read at all (not YAML, not a mapping, too large)."""


@dataclass(frozen=True, slots=True)
class BaseRow:
    rel_path: str
    title: str
    values: tuple[tuple[str, Any], ...]  # (column, value) in the view's `order`


@dataclass(frozen=True, slots=True)
class BaseView:
    base: str  # the .base file's vault-relative path
    name: str
    type: str
    columns: tuple[str, ...]
    rows: tuple[BaseRow, ...]
    problems: tuple[str, ...] = ()
    views: tuple[str, ...] = ()  # every view's name in the file, for a chooser

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(r.rel_path for r in self.rows)


@dataclass
class _Spec:
    data: dict[str, Any]
    formulas: dict[str, ast.Expression] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load_base(path: Path) -> dict[str, Any]:
    """The YAML mapping of a `.base` file. Raises `BaseFileError` with the reason."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BaseFileError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    if len(raw) > MAX_BASE_BYTES:
        raise BaseFileError(f"{path.name} is larger than {MAX_BASE_BYTES:,} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8", "replace"))
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise BaseFileError(f"{path.name} is not valid YAML: {first}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BaseFileError(f"{path.name} is not a mapping of settings (views, filters, formulas)")
    return data


def run_base(
    data: Mapping[str, Any],
    files: Mapping[str, FileRecord],
    *,
    base: str = "",
    view: str | None = None,
    root: Path | None = None,
    today: dt.date | None = None,
) -> BaseView:
    """Run one view (by name; the first when None) of a loaded Base over the index's notes."""
    spec = _Spec(dict(data))
    views = [v for v in spec.data.get("views") or [] if isinstance(v, dict)] or [{"type": "table", "name": "All"}]
    chosen = next((v for v in views if str(v.get("name")) == view), None) if view else views[0]
    if chosen is None:
        raise BaseFileError(f"{base or 'the base'} has no view named {view!r}")
    _compile_formulas(spec)
    for key in _NOT_RUN:
        if key in spec.data or key in chosen:
            spec.problems.append(f"{key}: not computed by Cairn")
    evaluator = Evaluator(spec.formulas, today)
    filters = [spec.data.get("filters"), chosen.get("filters")]
    wants_ctime = "ctime" in repr(spec.data)
    rows = []
    for rel, rec in files.items():
        row = make_row(rel, rec, root if wants_ctime else None)
        if all(_matches(f, row, evaluator, spec.problems) is not False for f in filters if f is not None):
            rows.append(row)
    columns = tuple(str(c) for c in chosen.get("order") or ("file.name",))
    rows = _sorted(rows, chosen, columns, evaluator, spec.problems)
    limit = chosen.get("limit")
    if isinstance(limit, int) and limit > 0:
        rows = rows[:limit]
    out = tuple(BaseRow(r.path, files[r.path].title, tuple((c, _column(c, r, evaluator, spec.problems)) for c in columns)) for r in rows)
    names = tuple(str(v.get("name") or f"View {i + 1}") for i, v in enumerate(views))
    kind = str(chosen.get("type") or "table")
    return BaseView(base, str(chosen.get("name") or names[0]), kind, columns, out, tuple(dict.fromkeys(spec.problems)), names)


def _compile_formulas(spec: _Spec) -> None:
    formulas = spec.data.get("formulas") or {}
    if not isinstance(formulas, dict):
        spec.problems.append("formulas: not a mapping of names to expressions")
        return
    for name, text in formulas.items():
        try:
            spec.formulas[str(name)] = compile_expression(str(text))
        except Unsupported as exc:
            spec.problems.append(f"formula.{name}: {exc.args[0]}")


def _matches(node: Any, row: Row, evaluator: Evaluator, problems: list[str]) -> bool | None:
    """Whether `row` passes a filter node; None when the node could not be run (reported)."""
    if isinstance(node, str):
        try:
            return bool(_truth(evaluator.value(compile_expression(node), row)))
        except Unsupported as exc:
            problems.append(f"filter {node!r}: {exc.args[0]} is not supported; statement left out")
            return None
    if isinstance(node, dict) and len(node) == 1:
        (op, items), = node.items()
        items = items if isinstance(items, list) else [items]
        results = [r for r in (_matches(i, row, evaluator, problems) for i in items) if r is not None]
        if op == "and":
            return all(results)
        if op == "or":
            return any(results) if results else None
        if op == "not":
            return not any(results)
    problems.append(f"filter {node!r}: not a statement or an and/or/not group; left out")
    return None


def _truth(value: Any) -> bool:
    return value not in (None, "", [], 0, False)


def _sorted(rows: list[Row], view: Mapping[str, Any], columns: tuple[str, ...], ev: Evaluator, problems: list[str]) -> list[Row]:
    """Rows in the view's order: its groupBy, then its sort, then its columns left to right."""
    keys: list[tuple[str, bool]] = []
    group = view.get("groupBy")
    if isinstance(group, dict) and group.get("property"):
        keys.append((str(group["property"]), str(group.get("direction", "ASC")).upper() == "DESC"))
    for item in view.get("sort") or []:
        if isinstance(item, dict) and item.get("property"):
            keys.append((str(item["property"]), str(item.get("direction", "ASC")).upper() == "DESC"))
    keys.extend((c, False) for c in columns)
    out = sorted(rows, key=lambda r: r.path)
    for column, descending in reversed(keys):  # stable sorts, least significant key first
        cells = {r.path: _column(column, r, ev, problems) for r in out}
        present = [r for r in out if cells[r.path] not in (None, [])]
        present.sort(key=lambda r: _sort_key(cells[r.path]), reverse=descending)
        out = present + [r for r in out if cells[r.path] in (None, [])]  # empty cells last either way
    return out


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None or value == []:
        return (2, "")
    if isinstance(value, bool):
        return (0, str(value))
    if isinstance(value, (int, float)):
        return (0, f"{value:030.6f}")
    if isinstance(value, (dt.date, dt.datetime)):
        return (1, value.isoformat())
    return (1, norm(", ".join(map(str, value)) if isinstance(value, list) else value))


def _column(column: str, row: Row, ev: Evaluator, problems: list[str]) -> Any:
    try:
        return ev.value(compile_expression(column), row)
    except Unsupported as exc:
        problems.append(f"column {column}: {exc.args[0]} is not supported")
        return None


def make_row(rel: str, rec: FileRecord, root: Path | None = None) -> Row:
    """What a Base's expressions see of one indexed note."""
    mtime = dt.datetime.fromtimestamp(rec.mtime_ns / 1e9) if rec.mtime_ns > 0 else None
    ctime = None
    if root is not None:
        try:
            st = os.stat(root / rel)
            ctime = dt.datetime.fromtimestamp(getattr(st, "st_birthtime", st.st_ctime))
        except OSError:
            ctime = None
    return Row(rel, record_values(rec), rec.tags, mtime, ctime, rec.size)


def record_values(rec: FileRecord) -> dict[str, Any]:
    """A note's properties as typed values (from its index terms): text is lower-cased there."""
    values: dict[str, Any] = {}
    lists: set[str] = set()
    for term in rec.props:
        decoded = decode_term(term)
        if decoded is None:
            if term != TASK_KEY:
                values.setdefault(term, None)
            continue
        key, kind, text = decoded
        if key == TASK_KEY:
            continue
        value: Any = text
        if kind == "n":
            value = float(text)
        elif kind == "b":
            value = text == "true"
        elif kind == "d":
            value = as_date(text)
        if kind == "l":
            lists.add(key)
        current = values.get(key)
        if current is None:
            values[key] = [value] if kind == "l" else value
        else:
            values[key] = (current if isinstance(current, list) else [current]) + [value]
    return values


def find_bases(root: Path, limit: int = 500) -> list[str]:
    """The `.base` files of a vault (vault-relative, sorted); hidden folders are skipped."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".base"):
                found.append(Path(folder, name).relative_to(root).as_posix())
                if len(found) >= limit:
                    return found
    return found
