"""The parallel build's worker process: it reads, parses and analyses the notes of the jobs it is
given and writes each job as one finished Whoosh segment into a scratch folder of its own.

Split from `core.index.parallel_build`, which hands out the jobs and takes the segments in.
The process is spawned by `core.base.spare_core` (the CLI starts it before its own imports)
and runs `serve`: it readies itself first (imports, parsers), then takes its jobs as its first
message and builds each one asked for, answering with the notes' outcomes, the segment and
the chunks' manifest hashes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from core.base.gc_pause import gc_paused
from core.base.models import Document, SkippedFile
from core.index.embed_text import chunk_hash
from core.index.file_errors import check_storable, parse_error
from core.index.keyword_store import KeywordStore
from core.vault.chunker import ChunkLimits
from core.vault.lazy_parser import lazy_parsers
from core.vault.notes import document_version, parse_note
from core.vault.obsidian_settings import SETTINGS_RECHECK_S, VaultSettings, settings_for_note
from core.vault.scanner import ScanEntry, read_note_bytes

Outcome = Document | SkippedFile | None  # None: the note holds what the index holds already
Job = list[tuple[ScanEntry, str | None]]  # notes with the version the index holds (None: new)


@dataclass(frozen=True, slots=True)
class BuiltSegment:
    """A finished Whoosh segment in a scratch folder, waiting to be listed in the index."""

    segment: Any  # whoosh.codec.whoosh3.W3Segment
    folder: str
    files: tuple[str, ...]


class _Worker:
    """Per-process state: the parsers are made once; the vault's Obsidian settings re-read every few seconds."""

    parsers: tuple[Any, Any] | None = None
    settings: tuple[float, VaultSettings] | None = None
    stores: dict[str, KeywordStore] = {}  # per process, by scratch folder

    @classmethod
    def store_in(cls, scratch: str) -> KeywordStore:
        """The process's scratch index, made in the scratch folder by its first job: every job's segment
        is written beside the others (each names its files by its own id), where a folder a job cost a
        directory made, and removed at the build's end (a `rmdir` takes 1.5-4 ms on the VM's ext4)."""
        store = cls.stores.get(scratch)
        if store is None:
            store = cls.stores[scratch] = KeywordStore.scratch(scratch)
        return store

    @classmethod
    def settings_for(cls, entry: ScanEntry) -> VaultSettings:
        now = time.monotonic()
        if cls.settings is None or now - cls.settings[0] > SETTINGS_RECHECK_S:
            cls.settings = (now, settings_for_note(entry.path, entry.rel_path))
        return cls.settings[1]


def read_note(vault: str, entry: ScanEntry, known_version: str | None, limits: ChunkLimits, max_bytes: int) -> Outcome:
    """Read and parse one note inside the per-file error boundary (as `VaultIndex._read`)."""
    if _Worker.parsers is None:
        _Worker.parsers = lazy_parsers()
    parser, link_parser = _Worker.parsers
    try:
        raw = read_note_bytes(entry, max_bytes)
        if isinstance(raw, SkippedFile):
            return raw
        if known_version is not None and known_version == document_version(raw):
            return None
        settings = _Worker.settings_for(entry)  # one vault per worker process
        doc = parse_note(
            vault, entry.rel_path, raw, size=entry.size, mtime_ns=entry.mtime_ns, limits=limits, parser=parser, link_parser=link_parser, settings=settings
        )
        check_storable(doc)
    except Exception as exc:  # noqa: BLE001 - the per-file boundary
        return parse_error(entry.rel_path, exc)
    return doc


def build_job(
    vault: str, job: Job, limits: ChunkLimits, max_bytes: int, scratch: str
) -> tuple[list[Outcome], BuiltSegment | None, list[tuple[str, ...] | None]]:
    """The worker's side: parse the job's notes, write their chunks as one Whoosh segment, and hash
    the chunks for the manifest (work the indexing process would do otherwise)."""
    with gc_paused():  # millions of short-lived objects, no cycles worth collecting mid-job
        outcomes = [read_note(vault, entry, known, limits, max_bytes) for entry, known in job]
        # As `records.chunk_hashes` (that module loads the search side of the index: not for the worker).
        hashes = [tuple(chunk_hash(o.title, c.heading_path, c.text) for c in o.chunks) if isinstance(o, Document) else None for o in outcomes]
        docs = [o for o in outcomes if isinstance(o, Document) and o.chunks]
        if not docs:
            return outcomes, None, hashes
        segment, files = _Worker.store_in(scratch).build_segment(docs, scratch)
        return outcomes, BuiltSegment(segment, scratch, files), hashes


def warm_up() -> None:
    """What every job needs, made while the worker waits for its jobs: the parsers (markdown-it's, made
    when a note first needs one: `core.vault.lazy_parser`)."""
    if _Worker.parsers is None:
        _Worker.parsers = lazy_parsers()


def serve(conn: Any) -> None:
    """The worker's loop: ready itself, take the jobs, build each one asked for; a job it cannot build
    is answered with None."""
    warm_up()
    try:
        vault, jobs, limits, max_bytes, scratch = conn.recv()
    except (EOFError, OSError):
        return  # the indexing process is gone, or needed no worker after all
    while True:
        try:
            index = conn.recv()
        except (EOFError, OSError):
            return  # the indexing process is gone or done
        try:
            answer: tuple[int, Any] = (index, build_job(vault, jobs[index], limits, max_bytes, scratch))
        except Exception:  # noqa: BLE001 - a note that broke the writer: the job is indexed there
            answer = (index, None)
        try:
            conn.send(answer)
        except (EOFError, OSError):
            return  # the indexing process is gone
        except Exception:  # noqa: BLE001 - an answer that would not pickle (nothing was sent)
            conn.send((index, None))
