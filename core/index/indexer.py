"""Keep one vault's indexes in step with its files.

A sync reads only what changed: unchanged notes (same size and mtime, or same hash) are never re-parsed, and an
unchanged vault rewrites nothing. `VaultIndex` holds two parts: `disk` (`core.index.index_open`: opening the index and
recovering from a crash) and `intake` (`core.index.intake`: a note or a built job into the indexes); what is here are
the passes that decide what to read.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.base.atomic import write_bytes_atomic
from core.base.config import EngineConfig, VaultConfig
from core.base.delegated import Delegated
from core.base.digest import sha256_hex
from core.base.models import Document, FileWarning, SkippedFile
from core.base.paths import AppPaths
from core.index.index_open import IndexOpening, Recovery
from core.index.keyword_index import KeywordIndex
from core.index.keyword_schema import ANALYZER_VERSION
from core.index.link_graph import LinkGraph
from core.index.manifest import FileRecord, IndexInfo, save_info, save_manifest
from core.index.sync_report import IGNORE_WARNING, ProcessResult, SyncStats, sync_stats, updated_info
from core.index.vault_lock import LIVE_WAIT_S, SYNC_WAIT_S, VaultLock
from core.vault.chunk_limits import ChunkLimits
from core.vault.kinds import EXTRACTOR_VERSION, attachment_kind

__all__ = ["IGNORE_WARNING", "PARSER_VERSION", "Progress", "Recovery", "SyncStats", "VaultIndex", "chunking_hash"]

if TYPE_CHECKING:  # the passes' modules are imported where a pass runs: a search opens an index and reads it
    from core.index.intake import NoteIntake
    from core.index.parallel_build import ParallelBuild
    from core.vault.attachments import AttachmentReading
    from core.vault.scanner import ScanEntry, Scanner

Progress = Callable[[int, int, str], None]
PARSER_VERSION = "chunker-3"  # 2: lone-CR line breaks; nested front matter values ignored. 3: attachments, chunk pages
SCRATCH = "building"  # where the worker of a parallel build writes its segments: beside the index, not in it


@dataclass(frozen=True, slots=True)
class _Pass:
    """What one `_process` pass hands each unit of work."""

    res: ProcessResult
    removed: list[str]
    reading: AttachmentReading
    writing: Callable[[], None]
    progress: Progress | None
    cancel: threading.Event | None


def chunking_hash(limits: ChunkLimits) -> str:
    return sha256_hex(f"{PARSER_VERSION};{EXTRACTOR_VERSION};{ANALYZER_VERSION};{limits.signature()}".encode())[:16]


class VaultIndex:
    """The keyword index, manifest and health record of one vault."""

    def __init__(self, vault: VaultConfig, paths: AppPaths, config: EngineConfig) -> None:
        self.vault = vault
        self.limits = ChunkLimits(config.soft_chars, config.hard_chars)
        self.max_bytes = config.max_file_bytes
        self.max_attachment_bytes = config.max_attachment_bytes
        self.attachment_seconds = config.attachment_seconds
        self.kinds_off = config.kinds_off  # kept in step by `VaultRegistry.update_config`
        self.ocr_entries: list[ScanEntry] | None = None  # the last sync's images and PDFs, for the OCR stage
        self._lock = threading.RLock()  # one writer at a time in this process
        self.disk = IndexOpening(paths.vault_dir(vault.name), vault, chunking_hash(self.limits), self._lock)
        self.links = LinkGraph.load(self.dir / "links.json")

    @functools.cached_property
    def intake(self) -> NoteIntake:
        """What commits notes, made on first write: a search never writes, and importing it (the
        parallel build, multiprocessing, the chunker's callers) was ~20 ms of a cold `cairn search`."""
        from core.index.intake import NoteIntake

        return NoteIntake(self.disk, self.vault, self.limits, self.max_bytes, self.links)

    # -- what `disk` holds (see core.index.index_open) --------------------------------------------

    dir: Delegated[Path] = Delegated("disk", doc="The vault's index folder.")
    keyword: Delegated[KeywordIndex] = Delegated("disk", doc="The Whoosh keyword index.")
    xlock: Delegated[VaultLock] = Delegated("disk", doc="The vault's writer lock across processes.")
    chunking_hash: Delegated[str] = Delegated("disk", doc="Names the chunker, extractor and analyzer.")
    manifest_path: Delegated[Path] = Delegated("disk")
    info_path: Delegated[Path] = Delegated("disk")
    dirty_path: Delegated[Path] = Delegated("disk")
    manifest_read: Delegated[bool] = Delegated("disk", doc="Whether the manifest is in memory.")
    recovery_found: Delegated[Recovery | None] = Delegated("disk", doc="What opening found without the manifest.")
    is_built: Delegated[bool] = Delegated("disk", doc="Searchable: built once, not thrown away since.")
    changed_elsewhere: Delegated[bool] = Delegated("disk", doc="Another process rewrote it since.")

    files: Delegated[dict[str, FileRecord]] = Delegated("disk", doc="rel_path -> what the index holds of it (the manifest).")

    @property
    def info(self) -> IndexInfo:
        """The health record (info.json) as this process knows it."""
        return self.disk.info

    @info.setter
    def info(self, value: IndexInfo) -> None:
        self.disk.info = value

    @property
    def recovery(self) -> Recovery | None:
        return self.disk.recovery

    @recovery.setter
    def recovery(self, value: Recovery | None) -> None:
        self.disk.recovery = value

    @property
    def lock(self) -> threading.RLock:
        """This process's writer lock of the vault (the OCR stage takes it as a sync does)."""
        return self._lock

    def mark_dirty(self) -> None:
        """Memory or the keyword index is about to move ahead of the manifest on disk. Only the flag's
        presence is ever read, so its bytes are not fsynced (that would not make its name durable)."""
        if not self.dirty_path.exists():
            write_bytes_atomic(self.dirty_path, b"memory is ahead of disk; reconcile on start\n", durable=False)

    def write_info(self, skipped: Iterable[SkippedFile], res: ProcessResult) -> None:
        """Save the health record (Index health) after a pass."""
        self.info = updated_info(self.info, self.vault.root, self.chunking_hash, self.files, skipped, res)
        save_info(self.info_path, self.info)
        self.disk.wrote()  # our own write: not a change made elsewhere

    def wrote(self) -> None:
        """This process wrote the index (e.g. saved its vectors): not a change made elsewhere."""
        self.disk.wrote()

    @property
    def is_dirty(self) -> bool:
        return self.dirty_path.exists()

    def flush(self) -> None:
        """Persist what the fast path kept in memory, then clear the dirty flag."""
        with self._lock, self.xlock.held(LIVE_WAIT_S):
            save_manifest(self.manifest_path, self.chunking_hash, self.files)
            self.links.save()
            self.write_info(self.info.skipped, ProcessResult())
            self.dirty_path.unlink(missing_ok=True)
            self.recovery = None

    def scanner(self) -> Scanner:
        from core.vault.scanner import Scanner

        # A kind switched off is skipped by the walk and the watcher; a sync removes what the index held of it.
        return Scanner(
            Path(self.vault.root),
            extra_ignores=self.vault.ignore,
            max_bytes=self.max_bytes,
            max_attachment_bytes=self.max_attachment_bytes,
            kinds_off=self.kinds_off,
        )

    def sync(self, progress: Progress | None = None, cancel: threading.Event | None = None, *, lock_wait: float = SYNC_WAIT_S) -> SyncStats:
        """Bring the index in line with the vault; the stats name the notes (re)indexed and removed.

        Raises:
            IndexBusyError: Another process kept the vault's lock for `lock_wait` seconds.
        """
        from core.vault.attachments import FolderSettings

        t0 = time.perf_counter()
        with self._lock, self.xlock.held(lock_wait):
            root = Path(self.vault.root)
            if not root.is_dir():
                raise FileNotFoundError(f"Vault folder {root} does not exist or is not a folder")
            scan = self.scanner().scan()
            self.ocr_entries = [e for e in scan.entries if attachment_kind(e.rel_path) in ("image", "pdf")]
            present = {e.rel_path for e in scan.entries}
            removed = sorted(set(self.files) - present)
            todo: list[ScanEntry] = []
            settings = FolderSettings(root)
            for entry in scan.entries:
                if attachment_kind(entry.rel_path) == "image":
                    continue  # read by OCR in a stage of its own, after the notes (core.index.ocr_pass)
                rec = self.files.get(entry.rel_path)
                if rec is not None and rec.size == entry.size and rec.mtime_ns == entry.mtime_ns:
                    # An attachment's confidentiality lives in a folder's `.cairn.yaml`, not the file.
                    if attachment_kind(entry.rel_path) is None or rec.confidentiality == settings.confidentiality(entry.rel_path):
                        continue
                todo.append(entry)
            # Whoosh commits batch by batch before the manifest is saved at the end: the dirty
            # flag covers a crash in between, as it does for the live path.
            result = self._process(todo, removed, list(scan.skipped), progress, cancel, persist=True, before_write=self.mark_dirty)
            result.warnings.extend(scan.warnings)
            result.rescanned = True
            if not result.cancelled:
                self._heal_links()
                if result.touched:  # bulk commits merge little: the segment count is bounded here, not on an edit
                    self.keyword.settle()
            stats = sync_stats(self.vault.name, self.files, result, t0)
            old_rules = {w for w in self.info.warnings if w.code == IGNORE_WARNING}
            if result.touched or self._health_changed(result.skipped) or self.recovery or old_rules != set(scan.warnings):
                self.write_info(result.skipped, result)
            if self.recovery or self.is_dirty:
                # The manifest matches the keyword index now (a cancel's unchecked records too): the flag can go.
                if not result.touched:
                    save_manifest(self.manifest_path, self.chunking_hash, self.files)
                    self.links.save()
                self.dirty_path.unlink(missing_ok=True)
                self.recovery = None
            return stats

    def update_paths(self, rel_paths: Iterable[str], *, persist: bool = True) -> SyncStats:
        """Re-index just these notes (the watcher's fast path); vanished ones are removed.

        With `persist=False` the keyword index is updated (searchable at once) but the
        manifest and health record wait for `flush()`; a dirty flag on disk says so.
        """
        from core.index.file_errors import parse_error
        from core.vault.scanner import ScanEntry, normalise_rel_path

        t0 = time.perf_counter()
        asked = sorted({normalise_rel_path(r) for r in rel_paths})
        with self._lock, self.xlock.held(LIVE_WAIT_S if not persist else SYNC_WAIT_S):
            scanner = self.scanner()
            todo: list[ScanEntry] = []
            removed: list[str] = []
            skipped: list[SkippedFile] = []
            for rel in asked:
                try:
                    found: ScanEntry | SkippedFile | None = scanner.classify(rel)
                except Exception as exc:  # noqa: BLE001 - the live path has the same per-file boundary as a sync
                    found = parse_error(rel, exc)
                if isinstance(found, ScanEntry):
                    if attachment_kind(rel) != "image":  # images: the OCR stage (core.index.ocr_pass)
                        todo.append(found)
                else:
                    if isinstance(found, SkippedFile):
                        skipped.append(found)
                    if rel in self.files:
                        removed.append(rel)
            # Without persist, the flag goes on disk before the first write: a crash from there
            # on is recovered on the next start.
            result = self._process(todo, removed, skipped, None, None, persist=persist, before_write=None if persist else self.mark_dirty)
            if result.touched or skipped:
                merged = {s.rel_path: s for s in self.info.skipped if s.rel_path not in set(asked)}
                merged.update({s.rel_path: s for s in result.skipped})
                if persist:
                    self.write_info(merged.values(), result)
                else:
                    self.info = updated_info(self.info, self.vault.root, self.chunking_hash, self.files, merged.values(), result)
            return sync_stats(self.vault.name, self.files, result, t0)

    def documents_for(self, rel_paths: Iterable[str]) -> list[Document]:
        """Parse these notes again (used to rebuild vectors without touching the keyword index)."""
        from core.vault.attachments import AttachmentReading
        from core.vault.scanner import ScanEntry

        scanner = self.scanner()
        docs = []
        with AttachmentReading(Path(self.vault.root), self.attachment_seconds) as reading:
            for rel in rel_paths:
                entry = scanner.classify(rel)
                if isinstance(entry, ScanEntry):
                    try:
                        got = self.intake.read(entry, None, reading)
                    except Exception:  # noqa: BLE001, S112 - the keyword pass reported it; vectors just go without
                        continue
                    if isinstance(got, Document):
                        docs.append(got)
        return docs

    def close(self) -> None:
        self.keyword.close()

    # -- internals -------------------------------------------------------------------------

    def _process(
        self,
        todo: list[ScanEntry],
        removed: list[str],
        skipped: list[SkippedFile],
        progress: Progress | None,
        cancel: threading.Event | None,
        *,
        persist: bool,
        before_write: Callable[[], None] | None = None,
    ) -> ProcessResult:
        """Parse and commit `todo`, drop `removed`. `before_write` runs once, before memory or the
        keyword index first moves ahead of the manifest on disk."""
        from core.vault.attachments import AttachmentReading, read_in_child
        from core.vault.obsidian_settings import load_settings

        res = ProcessResult(skipped=list(skipped))
        # A damaged .obsidian/types.json or daily-notes.json: defaults are used, and the user told why.
        res.warnings.extend(FileWarning(".obsidian", "obsidian_settings", p) for p in load_settings(self.vault.root).problems)
        pending_write = [before_write] if before_write is not None else []

        def writing() -> None:
            while pending_write:
                pending_write.pop()()

        # No OCR here: a scanned PDF is skipped as `no_text` and read by the OCR stage afterwards.
        reading = AttachmentReading(Path(self.vault.root), self.attachment_seconds, cancel)
        notes = [(e, self.files[e.rel_path].version if e.rel_path in self.files else None) for e in todo if attachment_kind(e.rel_path) is None]
        # The build first: it looks for a spare core, and the extractor's child starting would take it.
        from core.index.parallel_build import ParallelBuild

        build = ParallelBuild.start(self.vault.name, notes, self.limits, self.max_bytes, self.dir / SCRATCH, cancel)
        try:
            try:
                # New attachments (web pages, PDFs ...) are taken out in the extractor's child while the notes are indexed.
                reading.extract_ahead([(e.path, e.size) for e in todo if e.rel_path not in self.files and read_in_child(e.rel_path)])
                batch = self._take_units(build, todo, _Pass(res, removed, reading, writing, progress, cancel))
            finally:
                reading.close()
                if build is not None:  # killed now, torn down by the system beside the saves below, reaped after them
                    build.kill()
            if build is not None:  # the worker's notes came in as its jobs were done: their warnings back in scan order
                order = {entry.rel_path: i for i, entry in enumerate(todo)}
                res.warnings.sort(key=lambda w: order.get(w.rel_path, -1))
            return self._rest(batch, removed, res, len(todo), progress, writing, persist=persist)
        finally:
            if build is not None:
                build.close()

    def _rest(
        self,
        batch: list[Document],
        removed: list[str],
        res: ProcessResult,
        total: int,
        progress: Progress | None,
        writing: Callable[[], None],
        *,
        persist: bool,
    ) -> ProcessResult:
        """A pass's end: the last batch and the removed notes committed, the manifest and link graph saved."""
        if progress is not None and total and not res.cancelled:
            progress(total, total, "keyword")  # here, not in the loop: the last note may be skipped
        removed = sorted(set(removed))
        if batch or removed:
            writing()
            res.reindexed.extend(self.intake.commit_each(batch, removed, res))
        res.removed_paths = sorted(set(removed) | set(res.removed_paths))
        res.removed = len(res.removed_paths)
        res.touched = res.touched or bool(res.reindexed) or bool(res.removed_paths)
        if res.touched and persist:
            save_manifest(self.manifest_path, self.chunking_hash, self.files)
            self.links.save()
        return res

    def _take_units(self, build: ParallelBuild | None, todo: list[ScanEntry], p: _Pass) -> list[Document]:
        """Every unit of work into the indexes; returns the batch still to commit (a parallel build
        commits its own: `core.index.build_intake`)."""
        if build is not None:
            from core.index.build_intake import take_build

            take_build(self.intake, build, todo, p)
            return []
        batch: list[Document] = []
        total, res, cancel = len(todo), p.res, p.cancel
        for done, entry in enumerate(todo, 1):
            if cancel is not None and cancel.is_set():
                break
            batch = self.intake.one(entry, batch, res, p.removed, p.reading, p.writing, cancel)
            if p.progress is not None and done % 25 == 1 and done < total:
                p.progress(done, total, "keyword")
        if cancel is not None and cancel.is_set():  # also a PDF's extraction cut short: not a skip
            res.cancelled = True
        return batch

    def _heal_links(self) -> None:
        """Read the links of indexed notes the graph lacks (an index from before links, a crash)."""
        # PDFs and text files hold no links: re-reading a PDF here would extract it again for nothing.
        # A canvas's file cards are links: kept in the graph (it is re-read when it changes).
        linking = {rel: rec.version for rel, rec in self.files.items() if attachment_kind(rel) in (None, "canvas")}
        stale = [rel for rel in self.links.stale(linking) if attachment_kind(rel) is None]
        if stale:
            self.links.apply([], self.documents_for(stale))
        self.links.save()

    def _health_changed(self, skipped: Iterable[SkippedFile]) -> bool:
        return not self.info_path.exists() or set(skipped) != set(self.info.skipped)
