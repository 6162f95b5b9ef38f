"""The last stage of a sync: text in images and scans by OCR, then its embeddings.

`Engine.sync` runs it after a vault's notes are keyword-indexed and embedded, so search and
Ask work on the notes first; the live path runs it for an image or a scan saved into the
vault. The reading itself is `core.index.ocr_pass` (lowest priority, cancellable, resumed
where it stopped); what it read is embedded next, like any changed note. Its modules are
imported when a sync has an image or a scan to read: a search that opens the engine never does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from core.index.indexer import Progress, VaultIndex

if TYPE_CHECKING:
    from core.index.indexer import SyncStats
    from core.index.ocr_stats import OcrStats
    from core.index.vector_store import EmbedStats


class Engine(Protocol):
    """What the stage uses of `core.engine.Engine` (which imports this module)."""

    def write_lock(self, name: str) -> threading.RLock: ...
    def index_for(self, name: str) -> VaultIndex: ...
    def embed_vault(
        self, name: str, *, progress: Progress | None = ..., cancel: threading.Event | None = ..., persist: bool = ...,
        only: Sequence[str] | None = ..., yielding: bool = ...,
    ) -> EmbedStats | None: ...  # fmt: skip


def ocr_stage(
    engine: Engine,
    name: str,
    kw: SyncStats,
    emb: EmbedStats | None,
    *,
    embed: bool = True,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    only: Sequence[str] | None = None,
) -> tuple[OcrStats | None, EmbedStats | None]:
    """OCR what is pending (`only`: just these paths, the live path, which keeps vectors in memory
    until a flush), then embed what it read. Nothing when an earlier stage was cancelled or no
    path asked for is an image or a PDF. Returns the OCR stage's stats and the embedding's."""
    if kw.cancelled or (emb is not None and emb.cancelled):
        return None, emb
    from core.index.ocr_stats import OcrStats, is_ocr_kind

    if only is not None and not any(map(is_ocr_kind, only)):
        return None, emb
    vi = engine.index_for(name)
    if "image" in vi.kinds_off:  # OCR switched off (the default): `run_ocr`'s answer, without importing its side
        return OcrStats(vi.vault.name), emb
    from core.index.ocr_pass import run_ocr

    ocr = run_ocr(vi, progress, cancel, only, hold=lambda: engine.write_lock(name))
    if embed and ocr.read and not ocr.cancelled:
        live = only is not None
        emb = engine.embed_vault(
            name, progress=progress, cancel=cancel, persist=not live, yielding=not live, only=ocr.read if live else None
        )
    return ocr, emb
