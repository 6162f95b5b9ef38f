"""Find what a link in the Preview points at: a note (at a heading, block or line), an excerpt
to embed, an image file. Uses the vault's link graph, so the Preview resolves exactly as the
index does. No Qt here; reads only the engine's in-memory records and the notes themselves.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from core.base.models import ChunkRef, Hit, Link, LinkKind
from core.engine import Engine
from core.vault.display_text import one_line
from core.vault.frontmatter import split_front_matter
from core.vault.links import key
from desktop.actions import note_path
from desktop.note_links import Excerpt, anchor_range, byte_of_line, chunk_at, resolve_relative
from desktop.note_text import read_note

EXCERPT_SOURCE_CHARS = 4000  # markdown read for an embed's excerpt: never a whole big note
MAX_ATTACHMENT_WALK = 50_000  # files looked at to find an attachment by name, once per vault


class NoteLocator:
    """Resolves links of one engine's vaults; caches the attachment names of each vault."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._attachments: dict[str, dict[str, Path]] = {}

    def resolve(self, vault: str, source: str, target: str, anchor: str = "", kind: LinkKind = LinkKind.WIKI) -> str | None:
        """The note a link of `source` reaches, or None."""
        try:
            vi = self.engine.index_for(vault)
        except Exception:  # the vault was removed meanwhile
            return None
        found = vi.links.resolver().resolve(Link(kind, target, anchor), source)
        if found is None and kind is LinkKind.MARKDOWN:
            rel = resolve_relative(source, target)
            found = next((r for r in vi.files if key(r) == key(rel)), None)
        return found if found is not None and found in vi.files else None

    def hit_for(self, vault: str, rel: str, anchor: str = "", line: int = 0) -> Hit | None:
        """A Preview location: the note, with the chunk at `anchor` or `line` marked (none: the top)."""
        vc = self.engine.config.vault_named(vault)
        rec = self.engine.index_for(vault).files.get(rel) if vc is not None else None
        if vc is None or rec is None:
            return None
        start = end = 0
        span: tuple[int, int] | None = None
        if anchor or line:
            try:
                raw = read_note(note_path(vc.root, rel))
            except OSError:
                raw = b""
            span = anchor_range(rec.chunks, raw, anchor) if anchor else chunk_at(rec.chunks, byte_of_line(raw, line))
        ordinal, heading = 0, ""
        if span is not None:
            start, end = span
            for c in rec.chunks:
                if c.start_byte == start:
                    ordinal, heading = c.ordinal, c.heading_path
        return Hit(ChunkRef(vault, rel, ordinal, heading), 0.0, rec.title, "", start, end, None, None, (), tags=rec.tags, date=rec.date)

    def excerpt(self, vault: str, source: str, target: str, anchor: str) -> Excerpt | None:
        """The start of an embedded note (or of the embedded section), for a collapsed embed."""
        rel = self.resolve(vault, source, target, anchor)
        vc = self.engine.config.vault_named(vault)
        if rel is None or vc is None:
            return None
        rec = self.engine.index_for(vault).files[rel]
        try:
            raw = read_note(note_path(vc.root, rel))
        except OSError:
            return None
        span = anchor_range(rec.chunks, raw, anchor) if anchor else None
        if span is None:
            _, body = split_front_matter(raw, 3 if raw.startswith(b"\xef\xbb\xbf") else 0)
            span = (body, len(raw))
        text = raw[span[0] : span[1]].decode("utf-8", "replace")
        # As read (the title line left out: the embed shows the title): blank lines stay, as they end tables and callouts.
        shown = "\n".join(ln for ln in text.splitlines() if not ln.startswith("# "))
        return Excerpt(rec.title, one_line(shown[:EXCERPT_SOURCE_CHARS]))  # the excerpt shows ~280 of them

    def attachment(self, vault: str, source: str, target: str) -> Path | None:
        """An embedded file: beside the note, from the vault root, else anywhere by name (Obsidian's way)."""
        vc = self.engine.config.vault_named(vault)
        if vc is None:
            return None
        root = Path(vc.root)
        for rel in (posixpath.join(posixpath.dirname(source), target), target.lstrip("/")):
            candidate = root / Path(posixpath.normpath(rel))
            if candidate.is_file() and _inside(root, candidate):
                return candidate
        names = self._attachments.get(vault)
        if names is None:
            names = self._attachments[vault] = _file_names(root)
        return names.get(key(posixpath.basename(target)))

    def forget(self, vault: str | None = None) -> None:
        """Drop cached attachment names (files were added or moved)."""
        if vault is None:
            self._attachments.clear()
        else:
            self._attachments.pop(vault, None)


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _file_names(root: Path) -> dict[str, Path]:
    """Every non-note file of the vault by name (first found wins), hidden folders left out."""
    out: dict[str, Path] = {}
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            seen += 1
            if not name.lower().endswith(".md"):
                out.setdefault(key(name), Path(dirpath) / name)
        if seen > MAX_ATTACHMENT_WALK:
            break
    return out
