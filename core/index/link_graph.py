"""A vault's link graph: every note's outgoing links, resolved on demand, and its backlinks.

What is stored per note is what was parsed (links as written, aliases), keyed by the
note's version; resolution is redone whenever a note comes or goes, because a new
note can resolve links that were dead and a rename can break others. Resolving is
dictionary look-ups, so even 10k notes re-resolve in well under a second.

Persisted as JSON beside the manifest (`links.json`), written when the manifest is.
A note whose stored version differs from the manifest's is re-read by `stale()`, so
an index built before links existed, or a crash between the two files, heals on sync.

Every note's aliases are also written apart (`aliases.json`), stamped with the size and
mtime of the `links.json` they were taken from (and written again by the first search
that finds them stale, e.g. in a restored data folder): a search needs only the aliases (the title
boost), and reading `links.json` cost ~1 s of a cold `cairn search` on a 10k-note vault
whose notes all link (39 MB). The whole graph is read on first use of anything else.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.base.atomic import read_json, write_json_atomic
from core.base.models import Link, LinkKind

if TYPE_CHECKING:  # the resolver (and the link parser under it) loads when links are followed, not with a search
    from core.vault.link_resolver import Resolver

FORMAT = "links-1"
ALIASES_FORMAT = "aliases-1"


class LinkedNote(Protocol):
    """What the graph reads of a note: a `Document`, or what the parallel build's worker sends of one
    (`core.index.segment_worker.IndexedNote`)."""

    @property
    def rel_path(self) -> str: ...
    @property
    def document_version(self) -> str: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def links(self) -> tuple[Link, ...]: ...


@dataclass(frozen=True, slots=True)
class NoteLinkRecord:
    """What the graph keeps of one note: the version it was read at, its aliases, its links."""

    version: str
    aliases: tuple[str, ...]
    links: tuple[Link, ...]


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    """A link of `source`, with the note it reaches (None: unresolved, or an attachment)."""

    source: str
    link: Link
    target: str | None
    attachment: bool = False

    @property
    def resolved(self) -> bool:
        return self.target is not None or self.attachment


class LinkGraph:
    """Links of one vault; safe to query from one thread while another applies changes."""

    def __init__(self, path: Path, notes: dict[str, NoteLinkRecord] | None = None) -> None:
        self.path = path
        self._parsed: dict[str, NoteLinkRecord] = dict(notes or {})
        self._raw: dict[str, Any] | None = None  # as stored, parsed on first use (see `load`)
        self._unread = False  # `path` is still to be read (see `load`)
        self._aliases: dict[str, tuple[str, ...]] | None = None  # from `aliases.json` while `path` is unread
        self._lock = threading.RLock()
        self._resolved: dict[str, tuple[ResolvedLink, ...]] | None = None
        self._backlinks: dict[str, tuple[ResolvedLink, ...]] | None = None
        self._resolver: Resolver | None = None
        self._aliases_from: tuple[int, int] | None = None  # the `links.json` stamp this process wrote `aliases.json` for
        self.dirty = False

    # -- persistence -----------------------------------------------------------------------

    @classmethod
    def load(cls, path: Path) -> LinkGraph:
        """The stored graph, or an empty one (a damaged file is rebuilt by `stale()`, never fatal).

        When `aliases.json` was taken from `path` as it is now, only it is read: the graph
        is read on first use of anything but `aliases`. Otherwise only the JSON is read here;
        its links become objects on first use (building every `Link` of a 10k-note vault
        cost ~0.1 s of each cold `cairn search`).
        """
        graph = cls(path)
        stamp = _stamp(path)  # taken before the read: a file replaced meanwhile leaves a stamp that cannot match
        graph._aliases = _read_aliases(graph.aliases_path, stamp)
        if graph._aliases is not None:
            graph._unread = True
        else:
            graph._read()
            graph._keep_aliases(stamp)
        return graph

    @property
    def aliases_path(self) -> Path:
        return self.path.with_name("aliases.json")

    def _read(self) -> None:
        try:
            data = read_json(self.path)
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("notes"), dict):
            self._raw = data["notes"]

    @property
    def _notes(self) -> dict[str, NoteLinkRecord]:
        if self._unread or self._raw is not None:
            with self._lock:
                if self._unread:
                    self._read()
                    self._unread = False
                    self._aliases = None
                if self._raw is not None:
                    self._parsed = _parse_notes(self._raw)
                    self._raw = None
        return self._parsed

    def save(self) -> None:
        with self._lock:
            if not self.dirty and self.path.exists():
                if not self._unread and not self._aliases_in_step():
                    self._save_aliases()  # an index from before `aliases.json`, or a crash between the two
                return
            notes = {
                rel: {
                    "v": rec.version,
                    "aliases": list(rec.aliases),
                    "links": [[lk.kind.value, lk.target, lk.anchor, lk.label, lk.line, lk.context] for lk in rec.links],
                }
                for rel, rec in sorted(self._notes.items())
            }
            write_json_atomic(self.path, {"format": FORMAT, "notes": notes}, compact=True)
            self._save_aliases()
            self.dirty = False

    def _keep_aliases(self, stamp: tuple[int, int] | None) -> None:
        """Write `aliases.json` for the `links.json` just read, so the next search reads only it.

        A restored or copied data folder, or one written by a Cairn before `aliases.json`,
        would otherwise make every search read the whole graph until the next sync. A
        read-only data folder only costs the next search the same read.
        """
        raw = self._raw
        if stamp is None or raw is None:
            return
        named: dict[str, list[str]] = {}
        for rel, rec in sorted(raw.items()):
            names = rec.get("aliases") if isinstance(rec, dict) else None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                return  # damaged: `stale()` re-reads the notes and the next save writes both files
            if names:
                named[rel] = names
        try:
            payload = {"format": ALIASES_FORMAT, "links": list(stamp), "aliases": named}
            write_json_atomic(self.aliases_path, payload, compact=True, durable=False)  # a cache: see `_save_aliases`
        except OSError:
            return
        self._aliases_from = stamp

    def _save_aliases(self) -> None:
        """After `links.json`: a crash in between leaves a stamp that no longer matches it.

        Not fsynced: every reader checks the file (format, types, the stamp of the `links.json`
        it was taken from) and reads `links.json` instead when it does not match, and the next
        search or save writes it again. An empty, torn or old copy after a power cut costs one
        read of the graph, never a wrong alias."""
        stamp = _stamp(self.path)
        if stamp is not None:
            named = {rel: list(rec.aliases) for rel, rec in sorted(self._notes.items()) if rec.aliases}
            payload = {"format": ALIASES_FORMAT, "links": list(stamp), "aliases": named}
            write_json_atomic(self.aliases_path, payload, compact=True, durable=False)
            self._aliases_from = stamp

    def _aliases_in_step(self) -> bool:
        """`aliases.json` was taken from `links.json` as it is now (this process wrote it so, or it says so)."""
        stamp = _stamp(self.path)
        return stamp is not None and (stamp == self._aliases_from or _read_aliases(self.aliases_path, stamp) is not None)

    # -- updates ---------------------------------------------------------------------------

    def apply(self, removed: Iterable[str], docs: Iterable[LinkedNote]) -> None:
        with self._lock:
            for rel in removed:
                self._notes.pop(rel, None)
            for doc in docs:
                self._notes[doc.rel_path] = NoteLinkRecord(doc.document_version, doc.aliases, doc.links)
            self._changed()

    def stale(self, versions: Mapping[str, str]) -> list[str]:
        """Drop notes the index no longer has; name the notes whose links must be read again."""
        with self._lock:
            gone = [rel for rel in self._notes if rel not in versions]
            for rel in gone:
                self._notes.pop(rel)
            if gone:
                self._changed()
            return sorted(rel for rel, v in versions.items() if (rec := self._notes.get(rel)) is None or rec.version != v)

    def _changed(self) -> None:
        self._resolver = None
        self._resolved = None
        self._backlinks = None
        self.dirty = True

    # -- queries ---------------------------------------------------------------------------

    def __contains__(self, rel: str) -> bool:
        return rel in self._notes

    def __len__(self) -> int:
        return len(self._notes)

    def aliases(self, rel: str) -> tuple[str, ...]:
        kept = self._aliases
        if kept is not None:  # `links.json` not read: its aliases, as `aliases.json` has them
            return kept.get(rel, ())
        raw = self._raw
        if raw is not None:  # still as stored: no need to build every note's links for this
            stored = raw.get(rel)
            names = stored.get("aliases", ()) if isinstance(stored, dict) else ()
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                return tuple(names)
        rec = self._notes.get(rel)
        return rec.aliases if rec is not None else ()

    def resolver(self) -> Resolver:
        """Resolves names against the notes as they are now (rebuilt after any change)."""
        from core.vault.link_resolver import NoteName, Resolver

        with self._lock:
            if self._resolver is None:
                self._resolver = Resolver(NoteName(rel, rec.aliases) for rel, rec in self._notes.items())
            return self._resolver

    def outgoing(self, rel: str) -> tuple[ResolvedLink, ...]:
        return self._tables()[0].get(rel, ())

    def backlinks(self, rel: str) -> tuple[ResolvedLink, ...]:
        """Links from other notes to `rel` (a note's links to itself are not backlinks)."""
        return self._tables()[1].get(rel, ())

    def neighbours(self, rel: str) -> set[str]:
        """Notes `rel` links to or is linked from."""
        out = {r.target for r in self.outgoing(rel) if r.target is not None}
        out.update(r.source for r in self.backlinks(rel))
        out.discard(rel)
        return out

    def unresolved(self) -> list[ResolvedLink]:
        return [r for links in self._tables()[0].values() for r in links if not r.resolved]

    def _tables(self) -> tuple[dict[str, tuple[ResolvedLink, ...]], dict[str, tuple[ResolvedLink, ...]]]:
        from core.vault.links import is_attachment

        with self._lock:
            if self._resolved is None or self._backlinks is None:
                resolver = self.resolver()
                resolved: dict[str, tuple[ResolvedLink, ...]] = {}
                back: dict[str, list[ResolvedLink]] = {}
                for rel, rec in self._notes.items():
                    out = []
                    for link in rec.links:
                        target = resolver.resolve(link, rel)
                        attachment = target is None and is_attachment(link.target)
                        r = ResolvedLink(rel, link, target, attachment)
                        out.append(r)
                        if target is not None and target != rel:
                            back.setdefault(target, []).append(r)
                    resolved[rel] = tuple(out)
                self._resolved = resolved
                self._backlinks = {k: tuple(sorted(v, key=lambda r: (r.source, r.link.line))) for k, v in back.items()}
            return self._resolved, self._backlinks


def _stamp(path: Path) -> tuple[int, int] | None:
    """Size and mtime of `path`: what a copy or a restore from a backup keeps (an inode is not kept)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _read_aliases(path: Path, links_stamp: tuple[int, int] | None) -> dict[str, tuple[str, ...]] | None:
    """Every note's aliases from `path`, when taken from `links.json` as it is now (None otherwise)."""
    if links_stamp is None:
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != ALIASES_FORMAT or data.get("links") != list(links_stamp):
        return None
    named = data.get("aliases")
    if not isinstance(named, dict) or not all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in named.values()):
        return None
    return {rel: tuple(names) for rel, names in named.items()}


def _parse_notes(raw: dict[str, Any]) -> dict[str, NoteLinkRecord]:
    """Stored notes as records; a damaged file gives none (`stale()` re-reads every note)."""
    notes: dict[str, NoteLinkRecord] = {}
    try:
        for rel, rec in raw.items():
            links = tuple(Link(LinkKind(k), t, a, lab, int(ln), ctx) for k, t, a, lab, ln, ctx in rec["links"])
            notes[rel] = NoteLinkRecord(str(rec["v"]), tuple(rec.get("aliases", ())), links)
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}
    return notes
