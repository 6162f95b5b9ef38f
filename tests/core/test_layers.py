"""The core's layers, enforced: a lower layer never imports a higher one (docs/ARCHITECTURE.md).

Every `import` in every core module counts — at module level, inside functions and under
`TYPE_CHECKING` — because a lazy import hides a cycle rather than removing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Lowest first. Packages in one tuple are peers and must not import each other, except a
#: package importing itself. A module may import anything in a lower layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core.base",),
    ("core.vault", "core.providers"),
    ("core.index",),
    ("core.search",),
    ("core.engine", "core.engine_vaults", "core.status", "core.semantic", "core.ocr_stage", "core.watcher", "core.serialize", "core.structured"),
    ("core.answer",),
    ("core.cli", "core.mcp_server", "core.mcp_wire", "core.eval", "core.agents"),
)
#: Peers inside the application and interface layers may use each other.
OPEN_LAYERS = {4, 6}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every core module `path` imports, wherever the import sits."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {name for name in found if name == "core" or name.startswith("core.")}


def layer_of(module: str) -> tuple[int, str] | None:
    for level, packages in enumerate(LAYERS):
        for package in packages:
            if module == package or module.startswith(package + "."):
                return level, package
    return None


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Edges of `graph` (module -> imported modules) that go up a layer or across closed peers."""
    bad: list[str] = []
    for importer, imported in sorted(graph.items()):
        src = layer_of(importer)
        if src is None:
            continue
        for target in sorted(imported):
            dst = layer_of(target)
            if dst is None:
                continue
            if dst[0] > src[0] or (dst[0] == src[0] and dst[1] != src[1] and src[0] not in OPEN_LAYERS):
                bad.append(f"{importer} imports {target} ({src[1]} may not depend on {dst[1]})")
    return bad


def core_graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted((REPO / "core").rglob("*.py"))}


def test_every_core_module_belongs_to_a_layer() -> None:
    loose = [m for m in core_graph() if m != "core" and layer_of(m) is None]
    assert loose == [], f"modules outside every layer (add them to a layer package): {loose}"


def test_no_core_module_imports_a_higher_layer() -> None:
    assert violations(core_graph()) == []


def test_the_contract_catches_an_upward_import() -> None:
    graph = {"core.vault.scanner": {"core.engine"}, "core.index.indexer": {"core.vault.scanner"}}
    assert violations(graph) == ["core.vault.scanner imports core.engine (core.vault may not depend on core.engine)"]


def test_the_contract_catches_peers_importing_each_other() -> None:
    assert violations({"core.vault.notes": {"core.providers.secrets"}}) != []
    assert violations({"core.cli.main": {"core.eval.runner"}}) == []


def project_graph() -> dict[str, set[str]]:
    """Imports between the project's own modules (core and desktop), by module."""
    graph: dict[str, set[str]] = {}
    modules = {module_name(p) for root in ("core", "desktop") for p in (REPO / root).rglob("*.py")}
    for root in ("core", "desktop"):
        for path in sorted((REPO / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found: set[str] = set()
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
                for name in names:
                    while name and name not in modules:  # `from pkg.mod import func` -> pkg.mod
                        name = name.rpartition(".")[0]
                    if name and not module_name(path).startswith(name + ".") and name != module_name(path):
                        found.add(name)
            graph[module_name(path)] = found - {"core", "desktop"}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_between_project_modules() -> None:
    # Package __init__ files re-export their submodules; a cycle through one of them is
    # still a cycle, so they are not exempt.
    assert cycles(project_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
