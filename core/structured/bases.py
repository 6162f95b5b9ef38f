"""A Base opened from a path (a file on disk or `VAULT/rel.base`), run in its vault, and searched."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.base.confidentiality import is_restricted
from core.base.errors import UsageError
from core.base.models import SearchFilters, SearchResponse
from core.search.bases import BaseView, find_bases, load_base, run_base
from core.search.search import SearchRequest

if TYPE_CHECKING:
    from core.engine import Engine


def locate_base(engine: Engine, spec: str) -> tuple[str, Path, str]:
    """(vault name, vault root, path inside it) of a Base named by a file path or `VAULT/rel.base`.

    Raises:
        UsageError: no indexed vault holds it.
    """
    path = Path(spec).expanduser()
    if path.is_file():
        real = path.resolve()
        for v in engine.vaults:
            root = Path(v.root).resolve()
            if real.is_relative_to(root):
                return v.name, root, real.relative_to(root).as_posix()
        raise UsageError(f"{spec} is in no indexed vault; index its vault first (`cairn index --vault PATH`)")
    name, _, rel = spec.partition("/")
    for v in engine.vaults:
        if v.name == name and Path(v.root, rel).is_file():
            return v.name, Path(v.root), rel
    raise UsageError(f"No Base at {spec!r}: give the .base file's path, or VAULT/path/in/vault.base")


def open_base(engine: Engine, spec: str, view: str | None = None) -> tuple[str, BaseView]:
    """Run a Base's view over its vault's index; (vault, view). Unreadable files raise `UsageError`."""
    from core.search.bases import BaseFileError

    name, root, rel = locate_base(engine, spec)
    vi = engine.index_for(name)
    files = {p: r for p, r in vi.files.items() if not is_restricted(r.confidentiality)}
    try:
        return name, run_base(load_base(root / rel), files, base=rel, view=view, root=root)
    except BaseFileError as exc:
        raise UsageError(str(exc)) from None


def search_base(engine: Engine, vault: str, view: BaseView, query: str, k: int = 20, mode: str = "hybrid") -> SearchResponse:
    """Search only the Base's rows (the app's "choose a Base in the tree, then type")."""
    filters = SearchFilters(vaults=(vault,), paths=view.paths)
    return engine.search(SearchRequest(query, mode=mode, k=k, filters=filters))


def vault_bases(engine: Engine, vault: str) -> list[str]:
    return find_bases(Path(engine.vault(vault).root))


def base_json(vault: str, view: BaseView) -> dict[str, Any]:
    return {
        "vault": vault,
        "base": view.base,
        "view": view.name,
        "type": view.type,
        "views": list(view.views),
        "columns": list(view.columns),
        "problems": list(view.problems),
        "count": len(view.rows),
        "rows": [{"rel_path": r.rel_path, "title": r.title, "values": {c: _plain(v) for c, v in r.values}} for r in view.rows],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value



