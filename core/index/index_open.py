"""Opening a vault's index and recovering what a crash or a torn write left.

A part `VaultIndex` holds (`vi.disk`), beside the passes that change an index (a
full sync, the live path) and the intake that commits notes. What is here runs
before any of those: it decides which of the manifest and the Whoosh index to
trust (`Recovery`), reads a 10k-note manifest only when something needs it, and
tells whether another process rewrote the index since (`changed_elsewhere`).
"""

from __future__ import annotations

import threading
from enum import StrEnum
from pathlib import Path

from core.base.atomic import make_private, remove_tree_contents
from core.base.config import VaultConfig
from core.index.keyword_index import KeywordIndex
from core.index.manifest import FileRecord, IndexInfo, load_info, load_manifest, manifest_chunking_hash
from core.index.records import files_from_keyword, files_matching_keyword
from core.index.vault_lock import OPEN_WAIT_S, VaultLock


class Recovery(StrEnum):
    """What opening a vault's index found and repaired (None: a clean start)."""

    DIRTY_FLAG = "dirty_flag"  # a crash between live commits and the flush: the keyword index is the truth
    MANIFEST_REBUILT = "manifest_rebuilt"  # a torn manifest, rebuilt from Whoosh's stored fields
    KEYWORD_INDEX_DAMAGED = "keyword_index_damaged"  # Whoosh would not open: rebuilt from the notes
    OUTDATED = "outdated"  # built by another chunker/analyzer version: rebuilt from the notes
    # The manifest names notes the keyword index does not hold (an older Cairn emptied the index
    # but left the manifest): rebuilt from the index, so the next sync re-indexes what is missing.
    MANIFEST_MISMATCH = "manifest_mismatch"


class IndexOpening:
    """A vault's index as found on disk: its folder, health record, keyword index and manifest.

    Opening recovers what a crash or a torn write left (see `recovery`). The lock is its
    owner's (one writer at a time in this process); `xlock` is the vault's across processes.
    """

    def __init__(self, directory: Path, vault: VaultConfig, chunking_hash: str, lock: threading.RLock) -> None:
        self.dir = directory
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # owner-only as made: no chmod after
        make_private(self.dir)  # before anything is written below it (a folder an older version made 0755)
        self.chunking_hash = chunking_hash
        self._lock = lock
        self.xlock = VaultLock(self.dir)  # taken inside `_lock`
        self._stamp = self.disk_stamp()  # before reading: a write elsewhere from here on makes it stale
        self.info = load_info(self.info_path) or IndexInfo(vault.name, vault.root, chunking_hash=chunking_hash)
        self._files: dict[str, FileRecord] = {}
        self._manifest_pending = False  # the manifest is read on first use (see `_open`)
        self._recovery: Recovery | None = Recovery.DIRTY_FLAG if self.dirty_path.exists() else None
        self.files, self.keyword = self._open()
        make_private(self.dir, tree=True)  # an index written by an older version was 0644

    @property
    def files(self) -> dict[str, FileRecord]:
        """rel_path -> what the index holds of that note (the manifest), read on first use."""
        if self._manifest_pending:
            self._read_pending_manifest()
        return self._files

    @files.setter
    def files(self, value: dict[str, FileRecord]) -> None:
        self._files = value

    @property
    def manifest_read(self) -> bool:
        """Whether the manifest is in memory (so `files` and `recovery` cost nothing to ask)."""
        return not self._manifest_pending

    @property
    def recovery_found(self) -> Recovery | None:
        """What opening found without reading the manifest (a dirty flag, a damaged or outdated
        index); a manifest still to be read may yet add to it (see `recovery`)."""
        return self._recovery

    @property
    def recovery(self) -> Recovery | None:
        """What opening found and repaired; knowing it means reading the manifest."""
        if self._manifest_pending:
            self._read_pending_manifest()
        return self._recovery

    @recovery.setter
    def recovery(self, value: Recovery | None) -> None:
        self._recovery = value

    def _open(self) -> tuple[dict[str, FileRecord], KeywordIndex]:
        """Open the manifest and Whoosh index, recovering what a crash or torn write left.

        On a clean start whose manifest header names this chunker, only Whoosh is opened:
        parsing a 10k-note manifest costs ~0.2 s, most of a cold keyword `cairn search`,
        which never needs it. The rest is read on first use of `files` or `recovery`. So is
        the reconciling after a crash (a dirty flag): it reads every stored row of the keyword
        index (~2 s of CPU at 10k notes), which a search never needs, and a search does not
        clear the flag, so every search until the next write paid it.
        """
        lazy = self._recovery in (None, Recovery.DIRTY_FLAG)
        if lazy and manifest_chunking_hash(self.manifest_path) == self.chunking_hash:
            try:
                keyword = KeywordIndex(self.dir / "whoosh")
            except Exception:  # a damaged Whoosh index: rebuild it (embeddings come from the cache)
                self._recovery = Recovery.KEYWORD_INDEX_DAMAGED
            else:
                self._manifest_pending = True
                return {}, keyword
        return self._open_now()

    def _read_pending_manifest(self) -> None:
        with self._lock:
            if not self._manifest_pending:
                return
            loaded = load_manifest(self.manifest_path)
            if loaded is not None and loaded[0] == self.chunking_hash:
                self._files = loaded[1]
                if self._recovery == Recovery.DIRTY_FLAG:  # the keyword index may be ahead of the manifest
                    self._files = files_matching_keyword(self._files, self.keyword)
                # A manifest naming notes the keyword index lacks (an older Cairn emptied it):
                # the index is the truth, so the next sync re-indexes what is missing.
                elif self._recovery is None and _disagree(self._files, self.keyword) and self.xlock.free():
                    self._files = files_matching_keyword(self._files, self.keyword)
                    self._recovery = Recovery.MANIFEST_MISMATCH
            else:  # torn (or rewritten by another version) since its header was read
                self._files = files_from_keyword(self.keyword)
                self._recovery = Recovery.MANIFEST_REBUILT
            self._manifest_pending = False

    def _open_now(self) -> tuple[dict[str, FileRecord], KeywordIndex]:
        if self._recovery == Recovery.KEYWORD_INDEX_DAMAGED:
            self._reset_keyword_dir()
            keyword = KeywordIndex(self.dir / "whoosh")
            make_private(keyword.directory, tree=True)
            return {}, keyword
        loaded = load_manifest(self.manifest_path)
        if loaded is not None and loaded[0] == self.chunking_hash:
            try:
                keyword = KeywordIndex(self.dir / "whoosh")
                files = loaded[1]
                if self.recovery == Recovery.DIRTY_FLAG:  # the keyword index may be ahead of the manifest
                    files = files_matching_keyword(files, keyword)
                elif _disagree(files, keyword) and self.xlock.free():  # not a writer elsewhere mid-sync
                    files = files_matching_keyword(files, keyword)
                    self.recovery = Recovery.MANIFEST_MISMATCH
                return files, keyword
            except Exception:  # a damaged Whoosh index: rebuild it (embeddings come from the cache)
                self.recovery = Recovery.KEYWORD_INDEX_DAMAGED
        elif loaded is None and self.manifest_path.exists() and self.info.chunking_hash == self.chunking_hash:
            try:
                keyword = KeywordIndex(self.dir / "whoosh")
                self.recovery = Recovery.MANIFEST_REBUILT
                return files_from_keyword(keyword), keyword
            except Exception:
                self.recovery = Recovery.KEYWORD_INDEX_DAMAGED
        if loaded is None and not self.manifest_path.exists() and not self.info_path.exists():
            return self._open_first()
        if loaded is not None and loaded[0] != self.chunking_hash:
            self.recovery = self.recovery or Recovery.OUTDATED  # built by another chunker/analyzer version
        # No manifest yet may mean another process is building the first index right now:
        # start an empty one only when no other process writes (IndexBusyError otherwise).
        with self.xlock.held(OPEN_WAIT_S):
            self._reset_keyword_dir()
            keyword = KeywordIndex(self.dir / "whoosh")
            make_private(keyword.directory, tree=True)
        return {}, keyword

    def _open_first(self) -> tuple[dict[str, FileRecord], KeywordIndex]:
        """A vault never indexed to the end: perhaps its first index is being built right now.

        Another process (or this one, between opening and syncing) may be writing it, so
        it is never reset here: it is created if absent, and what a build cut short left is
        taken as it is (records rebuilt from the index, so the next sync removes notes that
        are gone and re-parses only what differs). Raises IndexBusyError while another
        process holds the vault's lock.
        """
        with self.xlock.held(OPEN_WAIT_S):
            if self.manifest_path.exists() or self.info_path.exists():  # finished while we waited
                self._stamp = self.disk_stamp()
                self.info = load_info(self.info_path) or self.info
                return self._open()
            try:
                keyword = KeywordIndex(self.dir / "whoosh")
            except Exception:  # damaged: a first index has nothing to lose
                self._reset_keyword_dir()
                keyword = KeywordIndex(self.dir / "whoosh")
            make_private(keyword.directory, tree=True)
            # Its segments' counts, not a searcher's: a searcher (and `whoosh.searching`) opened for
            # an empty index is ~3 ms of every first `cairn index`, and the build opens its own.
            if keyword.segment_count() == 0:
                return {}, keyword
            self.recovery = Recovery.MANIFEST_REBUILT
            return files_from_keyword(keyword), keyword

    def disk_stamp(self) -> tuple[tuple[int, int] | None, ...]:
        """Size and mtime of the health record (written last by every sync and flush) and of the
        vector file's record (written by every embedding run)."""
        out: list[tuple[int, int] | None] = []
        for path in (self.info_path, self.dir / "vectors.json"):
            try:
                st = path.stat()
            except OSError:
                out.append(None)
            else:
                out.append((st.st_size, st.st_mtime_ns))
        return tuple(out)

    def wrote(self) -> None:
        """This process wrote the index (e.g. saved its vectors): not a change made elsewhere."""
        self._stamp = self.disk_stamp()

    @property
    def changed_elsewhere(self) -> bool:
        """Another process rewrote this index since it was opened here (reopen to see it)."""
        return self.disk_stamp() != self._stamp

    @property
    def manifest_path(self) -> Path:
        return self.dir / "manifest.json"

    @property
    def dirty_path(self) -> Path:
        """Present while memory (the live path) is ahead of the manifest on disk."""
        return self.dir / "dirty"

    @property
    def info_path(self) -> Path:
        return self.dir / "info.json"

    @property
    def is_built(self) -> bool:
        """Searchable: built once, and not thrown away for being built by an older version."""
        # `_recovery`: a manifest still to be read can only add MANIFEST_REBUILT, which is searchable.
        return self.info_path.exists() and self._recovery not in (Recovery.OUTDATED, Recovery.KEYWORD_INDEX_DAMAGED)

    def _reset_keyword_dir(self) -> None:
        remove_tree_contents(self.dir / "whoosh")


def _disagree(files: dict[str, FileRecord], keyword: KeywordIndex) -> bool:
    """The manifest and the keyword index count different chunks (each chunk is one Whoosh document)."""
    return sum(len(r.chunks) for r in files.values()) != keyword.doc_count()
