"""What a sync did: the stats callers see, and the health record it leaves.

Apart from the indexer so its pass over the files reads as reading and committing;
the counting and the warning bookkeeping are plain functions of what the pass gathered.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.base.models import FileWarning, SkippedFile
from core.index.manifest import FileRecord, IndexInfo

if TYPE_CHECKING:
    from core.index.ocr_stats import OcrStats
    from core.index.vector_store import EmbedStats

IGNORE_WARNING = "ignore_pattern"  # FileWarning code of a bad ignore-file line (see IgnoreRules)


@dataclass(frozen=True, slots=True)
class SyncStats:
    """What one sync or live update did to a vault's keyword index, in counts."""

    vault: str
    documents: int
    chunks: int
    added: int
    changed: int
    removed: int
    unchanged: int
    skipped: dict[str, int]
    warnings: int
    seconds: float
    cancelled: bool = False
    changed_paths: tuple[str, ...] = ()
    removed_paths: tuple[str, ...] = ()
    extra: dict[str, float] = field(default_factory=dict)

    @classmethod
    def untouched(cls, info: IndexInfo) -> SyncStats:
        """The keyword side of a sync that left the keyword index alone (Resume of an embedding)."""
        return cls(info.vault, info.documents, info.chunks, 0, 0, 0, info.documents, {}, 0, 0.0)


@dataclass(frozen=True, slots=True)
class SyncReport:
    """One vault's sync, stage by stage: the keyword index, the vectors, OCR (`core.engine.Engine.sync`)."""

    keyword: SyncStats
    embedding: EmbedStats | None
    semantic_problem: str | None = None
    ocr: OcrStats | None = None  # the OCR stage (core.ocr_stage), when it ran


@dataclass
class ProcessResult:
    """What one pass over a vault's files did, gathered while it runs; `sync_stats` reports it."""

    # Rel paths parsed and committed (not the documents: a first index would hold them all).
    reindexed: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)
    added: int = 0
    changed: int = 0
    removed: int = 0
    removed_paths: list[str] = field(default_factory=list)
    cancelled: bool = False
    touched: bool = False
    rescanned: bool = False  # a full scan: its ignore-file warnings replace the old ones


def sync_stats(vault: str, files: dict[str, FileRecord], res: ProcessResult, t0: float) -> SyncStats:
    reasons = Counter(s.reason.value for s in res.skipped)
    return SyncStats(
        vault=vault,
        documents=len(files),
        chunks=sum(len(r.chunks) for r in files.values()),
        added=res.added,
        changed=res.changed,
        removed=res.removed,
        unchanged=len(files) - res.added - res.changed,
        skipped=dict(sorted(reasons.items())),
        warnings=len(res.warnings),
        seconds=time.perf_counter() - t0,
        cancelled=res.cancelled,
        changed_paths=tuple(res.reindexed),
        removed_paths=tuple(res.removed_paths),
    )


def updated_info(
    info: IndexInfo,
    root: str,
    chunking: str,
    files: dict[str, FileRecord],
    skipped: Iterable[SkippedFile],
    res: ProcessResult,
) -> IndexInfo:
    """Warnings are per note: a re-parsed note's old warnings are replaced by its new ones."""
    reparsed = set(res.reindexed) | set(res.removed_paths)
    kept = [
        w
        for w in info.warnings
        if (w.rel_path in files and w.rel_path not in reparsed) or (w.code == IGNORE_WARNING and not res.rescanned)
    ]
    return replace(
        info,
        root=root,
        built_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        chunking_hash=chunking,
        documents=len(files),
        chunks=sum(len(r.chunks) for r in files.values()),
        warnings=tuple(dict.fromkeys(kept + res.warnings)),
        skipped=tuple(sorted(skipped, key=lambda s: s.rel_path)),
        state="healthy",
    )
