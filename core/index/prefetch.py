"""Parse and analyse notes in a second process while the writer files the postings.

Whoosh's writer is pure Python under one GIL; parsing markdown, detecting each
chunk's language and analysing its text took about half of a first index. A
process pool on the spare core does that half ahead of the writer: it reads a
note, parses it, and returns the Whoosh rows of its chunks with their fields
analysed (`FieldAnalyser`), which pickle. The writer only files them.

Only bulk work on a machine with a spare core uses it (a first index, a big change): starting a process costs
~0.5-1 s. At most `AHEAD` jobs are in flight, so a huge vault is never held in
memory whole. If the pool cannot start (a frozen build, a daemonic process),
`start` returns None and the caller parses in-process as before.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from core.base.models import Document, SkippedFile
from core.index.fast_writer import Analysed, FieldAnalyser
from core.index.file_errors import check_storable, parse_error
from core.index.keyword_index import build_schema, document_fields
from core.vault.chunker import ChunkLimits, new_parser
from core.vault.links import new_link_parser
from core.vault.notes import document_version, parse_note
from core.vault.scanner import ScanEntry, read_note_bytes

MIN_NOTES = 400  # fewer notes than this are parsed in-process: starting a worker costs more
JOB_NOTES = 32  # notes per job: large enough to amortise the pickling round trip
JOB_TIMEOUT_S = 600.0  # a worker killed from outside never answers: its batch is then parsed here
AHEAD = 24  # jobs in flight: bounds memory (24 x 32 parsed notes) yet keeps the worker busy through a commit

Row = tuple[dict[str, Any], Analysed]  # a chunk's Whoosh fields and their analysed postings


@dataclass(frozen=True, slots=True)
class Prepared:
    """A parsed note and its chunks' rows, ready for the keyword writer."""

    doc: Document
    rows: list[Row]


Outcome = Prepared | SkippedFile | None  # None: the note holds what the index holds already


class _Worker:
    """Per-process state: parsers and the analyser (with its per-note memo) are made once."""

    state: tuple[Any, Any, FieldAnalyser] | None = None


def spare_core() -> bool:
    """Whether a second process would get a core of its own.

    On a busy machine (load average at or above the cores less one) the worker only adds its
    start-up and pickling: measured on tldr at load 6-15, 25.7-27.9 s wall with it against
    18.3-23.0 s without, for the same CPU time. Where the load is unknown (Windows), it is used.
    """
    cores = os.cpu_count() or 1
    if cores < 2:
        return False
    getloadavg = getattr(os, "getloadavg", None)
    return getloadavg is None or getloadavg()[0] < cores - 1


def prepare(vault: str, entry: ScanEntry, known_version: str | None, limits: ChunkLimits, max_bytes: int) -> Outcome:
    """Read, parse and analyse one note, inside the per-file error boundary (as `VaultIndex._read`)."""
    if _Worker.state is None:
        _Worker.state = (new_parser(), new_link_parser(), FieldAnalyser(build_schema()))
    parser, link_parser, analyser = _Worker.state
    try:
        raw = read_note_bytes(entry, max_bytes)
        if isinstance(raw, SkippedFile):
            return raw
        if known_version is not None and known_version == document_version(raw):
            return None
        doc = parse_note(vault, entry.rel_path, raw, size=entry.size, mtime_ns=entry.mtime_ns, limits=limits, parser=parser, link_parser=link_parser)
        check_storable(doc)
        rows = [(fields, analyser.analyse(fields, fields["lang"])) for fields in document_fields(doc)]
    except Exception as exc:  # noqa: BLE001 - the per-file boundary
        return parse_error(entry.rel_path, exc)
    return Prepared(doc, rows)


def _job(vault: str, batch: list[tuple[ScanEntry, str | None]], limits: ChunkLimits, max_bytes: int) -> list[Outcome]:
    return [prepare(vault, entry, known, limits, max_bytes) for entry, known in batch]


class Prefetch:
    """Outcomes of `entries` in order, computed by a worker process a few jobs ahead."""

    def __init__(self, pool: Any, vault: str, entries: Sequence[tuple[ScanEntry, str | None]], limits: ChunkLimits, max_bytes: int) -> None:
        self._pool = pool
        self._args = (vault, limits, max_bytes)
        self._jobs = [list(entries[i : i + JOB_NOTES]) for i in range(0, len(entries), JOB_NOTES)]
        self._next_job = 0
        self._pending: deque[Any] = deque()
        self._ready: deque[Outcome] = deque()
        self._fill()

    @classmethod
    def start(cls, vault: str, entries: Sequence[tuple[ScanEntry, str | None]], limits: ChunkLimits, max_bytes: int) -> Prefetch | None:
        """A running prefetch, or None where a worker is not worth it or cannot start."""
        if len(entries) < MIN_NOTES or not spare_core() or multiprocessing.current_process().daemon:
            return None
        try:
            pool = multiprocessing.get_context("spawn").Pool(1)
        except Exception:  # noqa: BLE001 - no worker: the caller parses in-process
            return None
        return cls(pool, vault, entries, limits, max_bytes)

    def _fill(self) -> None:
        vault, limits, max_bytes = self._args
        while len(self._pending) < AHEAD and self._next_job < len(self._jobs):
            batch = self._jobs[self._next_job]
            self._pending.append(self._pool.apply_async(_job, (vault, batch, limits, max_bytes)))
            self._next_job += 1

    def __iter__(self) -> Iterator[Outcome]:
        vault, limits, max_bytes = self._args
        done = 0
        while self._ready or self._pending:
            if not self._ready:
                batch = self._jobs[done]
                try:
                    self._ready.extend(self._pending.popleft().get(timeout=JOB_TIMEOUT_S))
                except Exception:  # noqa: BLE001 - a worker that died or hung: this batch in-process
                    self._ready.extend(_job(vault, batch, limits, max_bytes))
                done += 1
                self._fill()
            yield self._ready.popleft()

    def close(self) -> None:
        """Stop the worker (also mid-way: a cancelled sync leaves nothing running)."""
        self._pool.terminate()
        self._pool.join()
