"""Resolving a link target to a note path the way Obsidian does, within one vault.

Names match case-insensitively and Unicode-normalised (`core.vault.links.key`), the same
name in two folders goes to the one beside the linking note (else the shortest path), a
path-like target matches a path suffix, and front-matter aliases come after file names.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from core.base.models import Link, LinkKind
from core.vault.links import key, strip_note_ext


@dataclass(frozen=True, slots=True)
class NoteName:
    rel_path: str
    aliases: tuple[str, ...] = ()


class Resolver:
    """Resolves link targets to note paths within one vault."""

    def __init__(self, notes: Iterable[NoteName]) -> None:
        self._paths: dict[str, str] = {}  # key(path without .md) -> rel_path
        self._names: dict[str, list[str]] = {}  # key(stem) -> rel_paths
        self._aliases: dict[str, list[str]] = {}
        self._memo: dict[str, list[str]] = {}  # target -> candidates: most targets repeat
        for note in notes:
            bare = strip_note_ext(note.rel_path)
            self._paths[key(bare)] = note.rel_path
            self._names.setdefault(key(posixpath.basename(bare)), []).append(note.rel_path)
            for alias in note.aliases:
                self._aliases.setdefault(key(alias), []).append(note.rel_path)

    def resolve(self, link: Link, source: str) -> str | None:
        """The note `link` in note `source` points at, or None (unresolved or an attachment)."""
        target = link.target.strip()
        if not target:
            return source if link.anchor else None  # `[[#Heading]]` is a link into the same note
        if link.kind is LinkKind.MARKDOWN:
            folder = source.rpartition("/")[0]
            joined = posixpath.normpath(posixpath.join(folder, target)) if not target.startswith("/") else target.lstrip("/")
            hit = self._paths.get(key(strip_note_ext(joined)))
            if hit is not None:
                return hit
        return self.resolve_name(target, source)

    def resolve_name(self, target: str, source: str = "") -> str | None:
        found = self._memo.get(target)
        if found is None:
            found = self._memo[target] = self._candidates(target)
        return found[0] if len(found) == 1 else _closest(found, source)

    def _candidates(self, target: str) -> list[str]:
        """Notes a name could mean, before the linking note's folder breaks a tie."""
        bare = key(strip_note_ext(target.strip().lstrip("/")))
        if not bare:
            return []
        if "/" in bare:
            exact = self._paths.get(bare)
            if exact is not None:
                return [exact]
            same_name = self._names.get(bare.rpartition("/")[2], [])  # a path suffix ends in the note's name
            return [p for p in same_name if key(strip_note_ext(p)).endswith("/" + bare)]
        return self._names.get(bare) or self._aliases.get(bare) or []


def _closest(candidates: list[str], source: str) -> str | None:
    """Obsidian's pick among same-named notes: the linking note's own folder, else the shortest path."""
    if not candidates:
        return None
    folder = source.rpartition("/")[0]
    return min(candidates, key=lambda p: (p.rpartition("/")[0] != folder, p.count("/"), len(p), p))
