"""What an index knows about the vault it was built from, persisted as JSON.

The manifest lets a re-index skip every note whose size and mtime (or hash)
did not change; `IndexInfo` is the health record `cairn status` and the app show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.base.atomic import read_json, write_bytes_atomic, write_json_atomic
from core.base.models import FileWarning, SkippedFile, SkipReason
from core.base.structured import Task
from core.vault.tasks import task_status

INDEX_VERSION = 1
MANIFEST_FORMAT = "jsonl-1"


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """What the manifest keeps of one chunk: its place and the hash of what its vector embeds."""

    ordinal: int
    text_hash: str  # sha256 of the embedding input (core.index.embed_text), the embedding cache key
    start_byte: int
    end_byte: int
    heading_path: str
    page: int | None = None  # PDF page (1-based); None for notes


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One indexed note: enough to skip it next time and to filter its vectors."""

    version: str
    size: int
    mtime_ns: int
    title: str
    tags: tuple[str, ...]
    date: str | None
    doc_type: str | None
    confidentiality: str
    chunks: tuple[ChunkRecord, ...]
    props: tuple[str, ...] = ()  # typed property and task-state terms (`core.index.property_terms`)
    tasks: tuple[Task, ...] = ()
    _row: bytes | None = field(default=None, init=False, compare=False, repr=False)  # `encoded`, once made

    def encoded(self) -> bytes:
        """The record as the manifest's row holds it (`to_json`, compact, UTF-8), made once and kept (pickled
        with the record too). A parallel build makes it where the note was indexed, in either process, so
        the manifest written after the build's one commit is a join, not ~10 µs of encoding a note."""
        row = self._row
        if row is None:
            row = _ROW(self.to_json()).encode()
            object.__setattr__(self, "_row", row)
        return row

    def keep_encoded(self, row: bytes | None) -> None:
        """Take `row` as `encoded`'s answer: the row another process made of an equal record (None: none
        kept, made again when asked)."""
        object.__setattr__(self, "_row", row)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "version": self.version,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "title": self.title,
            "tags": list(self.tags),
            "date": self.date,
            "doc_type": self.doc_type,
            "confidentiality": self.confidentiality,
        }
        d["chunks"] = [[c.ordinal, c.text_hash, c.start_byte, c.end_byte, c.heading_path, *([c.page] if c.page is not None else [])] for c in self.chunks]
        if self.props:
            d["props"] = list(self.props)
        if self.tasks:
            d["tasks"] = [task_row(t) for t in self.tasks]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FileRecord:
        chunks = tuple(ChunkRecord(int(o), str(h), int(s), int(e), str(p), *([int(rest[0])] if rest else [])) for o, h, s, e, p, *rest in d["chunks"])
        return cls(
            version=d["version"],
            size=int(d["size"]),
            mtime_ns=int(d["mtime_ns"]),
            title=d["title"],
            tags=tuple(d["tags"]),
            date=d.get("date"),
            doc_type=d.get("doc_type"),
            confidentiality=d.get("confidentiality", "internal"),
            chunks=chunks,
            props=tuple(d.get("props", ())),
            tasks=tuple(task_from_row(r) for r in d.get("tasks", ())),
        )


_TASK_DATES = ("due", "scheduled", "start", "created", "done", "cancelled")


def task_row(task: Task) -> list[Any]:
    """A task as a compact JSON row (a task-heavy vault has thousands): dates only when set."""
    dates = {f: getattr(task, f) for f in _TASK_DATES if getattr(task, f)}
    return [task.line, task.symbol, task.text, task.heading, task.priority, dates]


def task_from_row(row: list[Any]) -> Task:
    line, symbol, text, heading, priority, dates = row
    return Task(int(line), str(symbol), task_status(str(symbol)), str(text), str(heading), priority=str(priority), **dates)


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """A vault index's health record (info.json): its state, counts, skipped files and warnings."""

    vault: str
    root: str
    index_version: int = INDEX_VERSION
    state: str = "healthy"  # healthy | degraded
    built_at: str = ""
    chunking_hash: str = ""
    documents: int = 0
    chunks: int = 0
    warnings: tuple[FileWarning, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    notes: tuple[str, ...] = ()  # index-level warnings, e.g. "semantic index 40% complete"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "vault": self.vault,
            "root": self.root,
            "index_version": self.index_version,
            "state": self.state,
            "built_at": self.built_at,
            "chunking_hash": self.chunking_hash,
            "totals": {"documents": self.documents, "chunks": self.chunks},
            "warnings": [{"rel_path": w.rel_path, "code": w.code, "detail": w.detail} for w in self.warnings],  # = asdict(w)
            "skipped": [{"rel_path": s.rel_path, "reason": s.reason.value, "detail": s.detail} for s in self.skipped],
            "notes": list(self.notes),
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> IndexInfo:
        totals = d.get("totals", {})
        return cls(
            vault=d["vault"],
            root=d["root"],
            index_version=int(d.get("index_version", 0)),
            state=d.get("state", "degraded"),
            built_at=d.get("built_at", ""),
            chunking_hash=d.get("chunking_hash", ""),
            documents=int(totals.get("documents", 0)),
            chunks=int(totals.get("chunks", 0)),
            warnings=tuple(FileWarning(**w) for w in d.get("warnings", [])),
            skipped=tuple(SkippedFile(s["rel_path"], SkipReason(s["reason"]), s["detail"]) for s in d.get("skipped", [])),
            notes=tuple(d.get("notes", [])),
            extra=dict(d.get("extra", {})),
        )


def load_manifest(path: Path) -> tuple[str, dict[str, FileRecord]] | None:
    """Returns (chunking_hash, files) or None when missing, torn or unreadable (recovered by the caller).

    One JSON line per note, parsed line by line: a single `json.loads` of a
    10k-note manifest holds the GIL for ~80 ms, long enough to stall a window.
    A header names the count and a trailer repeats it, so a torn write is
    never mistaken for a smaller vault. The file is read in one call, not line
    by line: each buffered read gives the GIL up and takes it straight back,
    which resets a waiting thread's claim on it (CPython's convoy effect), so
    a line-by-line read kept a window from running for up to 130 ms.
    """
    try:
        lines = iter(path.read_bytes().splitlines())
        header = json.loads(next(lines))
        files: dict[str, FileRecord] = {}
        trailer = None
        for line in lines:
            row = json.loads(line)
            if "end" in row:
                trailer = row
                break
            files[row["rel_path"]] = FileRecord.from_json(row["record"])
        if trailer is None or trailer["end"] != header["count"] or len(files) != header["count"]:
            return None
        return str(header["chunking_hash"]), files
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None


def manifest_chunking_hash(path: Path) -> str | None:
    """The chunking hash in a manifest's header line, without reading the rest (None: unreadable)."""
    try:
        with path.open("rb") as fh:
            header = json.loads(fh.readline(4096))
        return str(header["chunking_hash"]) if header.get("manifest") == MANIFEST_FORMAT else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save_manifest(path: Path, chunking_hash: str, files: dict[str, FileRecord]) -> None:
    # Each row encoded on its own: one string of the whole file (UCS-4 as soon as one note holds
    # an emoji) cost ~1 ms to build and encode on a 200-note vault full of tasks.
    rows = [json.dumps({"manifest": MANIFEST_FORMAT, "chunking_hash": chunking_hash, "count": len(files)}).encode()]
    rows.extend(b'{"rel_path":%b,"record":%b}' % (_TEXT(rel).encode(), files[rel].encoded()) for rel in sorted(files))
    rows.append(json.dumps({"end": len(files)}).encode())
    rows.append(b"")
    write_bytes_atomic(path, b"\n".join(rows))
    for record in files.values():  # saved: a vault kept open (the app) does not hold a second manifest in memory
        record.keep_encoded(None)


_ROW = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # as `json.dumps` with these options
_TEXT = json.encoder.encode_basestring  # a str as `_ROW` spells it (ensure_ascii=False)


def load_info(path: Path) -> IndexInfo | None:
    try:
        return IndexInfo.from_json(read_json(path))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_info(path: Path, info: IndexInfo) -> None:
    write_json_atomic(path, info.to_json())
