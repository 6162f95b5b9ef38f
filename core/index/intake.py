"""How notes enter a vault's indexes: read here or built by the worker, then committed.

A part `VaultIndex` holds (`vi.intake`), beside the passes (a full sync, the live path)
that decide what to read. What is here takes one note at a time into the keyword
index, the link graph and the manifest, keeping the per-file error boundary: one
note's failure becomes a skip with a reason, never a failed pass. A parallel build's
notes and the worker's segments go through `core.index.build_intake` instead, which
falls back to `commit_each` here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from core.base.atomic import make_private
from core.base.config import VaultConfig
from core.base.models import Document, SkippedFile
from core.index.file_errors import check_storable, parse_error
from core.index.index_open import IndexOpening
from core.index.keyword_index import KeywordIndex
from core.index.link_graph import LinkGraph
from core.index.manifest import FileRecord
from core.index.records import record_for
from core.index.sync_report import ProcessResult
from core.vault.attachments import AttachmentReading, attachment_kind
from core.vault.chunker import ChunkLimits
from core.vault.lazy_parser import lazy_parsers
from core.vault.notes import document_version, parse_note
from core.vault.obsidian_settings import SETTINGS_RECHECK_S, VaultSettings, load_settings
from core.vault.scanner import ScanEntry, read_note_bytes

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

BATCH = 1000  # notes per Whoosh commit: fewer, larger segments make searches cheaper


class NoteSink(Protocol):
    """Where a parsed note can go instead of the batch (`core.index.build_intake.OneCommit`: an open writer)."""

    def add(self, doc: Document, old: FileRecord | None) -> None: ...


class NoteIntake:
    """A note, a batch or a built job into the keyword index, the link graph and the manifest (`disk.files`)."""

    def __init__(self, disk: IndexOpening, vault: VaultConfig, limits: ChunkLimits, max_bytes: int, links: LinkGraph) -> None:
        self._disk = disk
        self.vault = vault
        self.limits = limits
        self.max_bytes = max_bytes
        self.links = links
        self._parsers: tuple[MarkdownIt, MarkdownIt] | None = None  # made by the first parse: searching needs none
        self._settings: tuple[float, VaultSettings] | None = None  # (when read, the vault's Obsidian settings)

    @property
    def files(self) -> dict[str, FileRecord]:
        return self._disk.files

    @property
    def keyword(self) -> KeywordIndex:
        return self._disk.keyword

    def one(
        self,
        entry: ScanEntry,
        batch: list[Document],
        res: ProcessResult,
        removed: list[str],
        reading: AttachmentReading,
        writing: Callable[[], None],
        cancel: threading.Event | None,
        into: NoteSink | None = None,
    ) -> list[Document]:
        """Read one note or attachment here and queue what it gives (or add it to `into`: a parallel
        build's open writer). Returns the batch to go on with."""
        old = self.files.get(entry.rel_path)
        # The per-file error boundary: whatever one note or attachment does to the reader
        # or parser, it becomes a skip with a reason in Index health, and the rest go in.
        try:
            got = self.read(entry, old, reading)
            if isinstance(got, Document):
                check_storable(got)
        except Exception as exc:  # noqa: BLE001 - the per-file boundary
            got = parse_error(entry.rel_path, exc)
        if cancel is not None and cancel.is_set():  # a PDF's extraction was cut short: neither a skip nor a note
            return batch
        if isinstance(got, Document):
            if into is not None:
                into.add(got, old)
                return batch
            return self._take(got, old, batch, res, writing)
        self.not_indexed(entry, got, res, removed, writing)
        return batch

    def not_indexed(self, entry: ScanEntry, got: SkippedFile | None, res: ProcessResult, removed: list[str], writing: Callable[[], None]) -> None:
        """A note that adds no chunks: skipped (its old chunks go), or the same content as indexed."""
        if isinstance(got, SkippedFile):
            res.skipped.append(got)
            if entry.rel_path in self.files:
                removed.append(entry.rel_path)
            return
        old = self.files[entry.rel_path]
        if (old.size, old.mtime_ns) != (entry.size, entry.mtime_ns):
            writing()
            self.files[entry.rel_path] = replace(old, size=entry.size, mtime_ns=entry.mtime_ns)
            res.touched = True  # only the manifest's stat record moves

    def _take(self, doc: Document, old: FileRecord | None, batch: list[Document], res: ProcessResult, writing: Callable[[], None]) -> list[Document]:
        """Queue a parsed document; commit the batch when it is full. Returns the batch to go on with."""
        res.warnings.extend(doc.warnings)
        batch.append(doc)
        if old is None:
            res.added += 1
        else:
            res.changed += 1
        # Attachments commit sooner: one PDF can hold thousands of chunks.
        if len(batch) >= BATCH or (attachment_kind(doc.rel_path) and sum(len(d.chunks) for d in batch) >= 5 * BATCH):
            writing()
            res.reindexed.extend(self.commit_each(batch, [], res))
            batch = []
        return batch

    def read(self, entry: ScanEntry, old: FileRecord | None, reading: AttachmentReading) -> Document | SkippedFile | None:
        """Parse a note or attachment; None when it holds what the index holds already.

        `files` names what the keyword index holds (after a crash too: see `_open`), so the
        same hash means the same chunks are indexed already.
        """
        if attachment_kind(entry.rel_path) is None:
            raw = read_note_bytes(entry, self.max_bytes)
            if isinstance(raw, SkippedFile):
                return raw
            if old is not None and old.version == document_version(raw):
                return None
            return self._parse(entry, raw)
        indexed = (old.version, old.confidentiality) if old is not None else None
        return reading.read(self.vault.name, entry.rel_path, entry.path, entry.size, entry.mtime_ns, indexed, self.limits, self.max_bytes)

    def _parse(self, entry: ScanEntry, raw: bytes) -> Document:
        if self._parsers is None:
            self._parsers = lazy_parsers()
        parsers = self._parsers
        return parse_note(
            self.vault.name,
            entry.rel_path,
            raw,
            size=entry.size,
            mtime_ns=entry.mtime_ns,
            limits=self.limits,
            parser=parsers[0],
            link_parser=parsers[1],
            settings=self._vault_settings(),
        )

    def _vault_settings(self) -> VaultSettings:
        """The vault's Obsidian settings, looked at again at most every `SETTINGS_RECHECK_S`.

        Checking whether `types.json` or `daily-notes.json` changed costs two `stat` calls:
        once a note made it ~4 % of a cold index.
        """
        now = time.monotonic()
        if self._settings is None or now - self._settings[0] > SETTINGS_RECHECK_S:
            self._settings = (now, load_settings(self.vault.root))
        return self._settings[1]

    def commit_each(self, docs: list[Document], removed: list[str], res: ProcessResult) -> list[str]:
        """Commit a batch; if the index refuses it, commit note by note so the one note it
        refuses is skipped with the reason and the rest still go in. Returns what went in."""
        try:
            self._commit(docs, removed)
            return [d.rel_path for d in docs]
        except Exception:
            if len(docs) <= 1 and not removed:
                if docs:
                    raise
                return []
        self._commit([], removed)
        done: list[str] = []
        for doc in docs:
            try:
                self._commit([doc], [])
            except Exception as exc:  # noqa: BLE001 - the per-file boundary
                res.skipped.append(parse_error(doc.rel_path, exc))
                if doc.rel_path in self.files:
                    self._commit([], [doc.rel_path])
                    res.removed_paths.append(doc.rel_path)
                continue
            done.append(doc.rel_path)
        return done

    def _commit(self, docs: list[Document], removed: list[str]) -> None:
        self.keyword.apply(removed, docs, self.files)
        make_private(self.keyword.directory, tree=True)  # Whoosh creates its files 0644
        self.links.apply(removed, docs)
        for rel in removed:
            self.files.pop(rel, None)
        for doc in docs:
            self.files[doc.rel_path] = record_for(doc)
