"""Dendron-style dotted note names (`dendron.topic.publish.md`) as a hierarchy for the tree.

Dendron keeps a vault flat and spells the hierarchy in file names, so a tree of
folders showed 1,012 notes at the root. When most names in a folder are dotted,
each dotted prefix becomes a node ("dendron" › "topic") counting the notes below
it; selecting one scopes the search to the notes whose path starts with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MOSTLY = 0.5  # a folder's names are "mostly dotted" above this share


@dataclass(frozen=True, slots=True)
class DottedNode:
    """One level of a dotted hierarchy: `prefix` is the path prefix it scopes to ("notes/a.b.")."""

    folder: str  # the real folder the notes live in ("" for the vault root)
    prefix: str  # "a.b." relative to the vault (folder included)
    parent_prefix: str  # "" when the node hangs directly under its folder
    label: str  # "b"
    count: int


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if name.endswith((".md", ".markdown")) else name


def mostly_dotted(names: Iterable[str]) -> bool:
    """Whether more than half the notes' names (without the extension) hold a dot."""
    stems = [_stem(n) for n in names if n.endswith((".md", ".markdown"))]
    return bool(stems) and sum("." in s for s in stems) / len(stems) > MOSTLY


def dotted_nodes(rel_paths: Iterable[str]) -> list[DottedNode]:
    """The hierarchy nodes of every folder whose note names are mostly dotted, parents first.

    A prefix becomes a node only when some name continues past it (`a.b.md` makes
    `a`; `a.md` alone makes nothing); its count is the notes it scopes to.
    """
    by_folder: dict[str, list[str]] = {}
    for rel in rel_paths:
        folder, _, name = rel.rpartition("/")
        by_folder.setdefault(folder, []).append(name)
    out: list[DottedNode] = []
    for folder in sorted(by_folder):
        names = by_folder[folder]
        if not mostly_dotted(names):
            continue
        base = f"{folder}/" if folder else ""
        counts: dict[tuple[str, ...], int] = {}
        stems = [_stem(n) for n in names]
        for stem in stems:
            pieces = stem.split(".")
            for depth in range(1, len(pieces)):
                counts[tuple(pieces[:depth])] = counts.get(tuple(pieces[:depth]), 0) + 1
        for key in sorted(counts):
            exact = stems.count(".".join(key))  # `a.md` belongs to node `a`
            parent = base + ".".join(key[:-1]) + "." if len(key) > 1 else ""
            out.append(DottedNode(folder, base + ".".join(key) + ".", parent, key[-1], counts[key] + exact))
    return out
