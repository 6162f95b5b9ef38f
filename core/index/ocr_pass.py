"""The OCR stage: images and scanned PDFs, read after the notes are keyword-indexed and embedded.

OCR takes seconds an image and seconds a page; notes take milliseconds. So the keyword pass
leaves images aside and reads PDFs without OCR (a scan is skipped there as `no_text`), and
`Engine.sync` runs this stage last, after the notes' embeddings: search and Ask work on the
notes first, and what OCR finds joins them file by file (then it is embedded too).

- **Lowest priority**: the recognising runs in the extraction child, which lowers its own
  priority (`os.nice(19)`, `core.vault.ocr_text`), so the app and other work keep the cores.
- **Cancellable**: the cancel flag is looked at between requests and kills the child mid-page.
- **Resumable**: what OCR read is kept per file in the index folder (`core.index.ocr_store`);
  a file with the same hash is never read again, and a scanned PDF is read `PORTION_PAGES`
  pages per request, round-robin over the files, so a long scan neither holds up the others
  nor starts over after a cancel: the next pass goes on at the next page.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.base.models import Document, SkippedFile, SkipReason
from core.index.file_errors import parse_error
from core.index.manifest import save_manifest
from core.index.ocr_stats import OcrStats, is_ocr_kind
from core.index.ocr_store import OcrRecord, OcrStore
from core.index.sync_report import ProcessResult
from core.index.vault_lock import SYNC_WAIT_S
from core.vault.attachments import AttachmentSource, FolderSettings, attachment_kind, file_version, units_document
from core.vault.kinds import KindText
from core.vault.ocr_text import PORTION_PAGES  # a scanned PDF's pages a request (the module loads no OCR library)
from core.vault.pdf import PdfPage
from core.vault.scanner import ScanEntry

if TYPE_CHECKING:
    from core.base.config import VaultConfig
    from core.index.intake import NoteIntake
    from core.index.link_graph import LinkGraph
    from core.index.manifest import FileRecord, IndexInfo
    from core.index.sync_report import ProcessResult as _Result
    from core.index.vault_lock import VaultLock
    from core.vault.chunker import ChunkLimits
    from core.vault.extractor import PdfExtractor
    from core.vault.scanner import Scanner

Progress = Callable[[int, int, str], None]
Hold = Callable[[], AbstractContextManager[Any]]  # the caller's writer lock of the vault (the engine's)
PHASE = "ocr"


class VaultIndex(Protocol):
    """What the stage uses of `core.index.indexer.VaultIndex` (named here: the indexer does not import this module's caller)."""

    vault: VaultConfig
    kinds_off: tuple[str, ...]
    attachment_seconds: float
    limits: ChunkLimits
    links: LinkGraph
    ocr_entries: list[ScanEntry] | None

    @property
    def intake(self) -> NoteIntake: ...
    @property
    def lock(self) -> threading.RLock: ...
    @property
    def xlock(self) -> VaultLock: ...
    @property
    def dir(self) -> Path: ...
    @property
    def files(self) -> dict[str, FileRecord]: ...
    @property
    def info(self) -> IndexInfo: ...
    @property
    def is_dirty(self) -> bool: ...
    @property
    def recovery(self) -> object | None: ...
    @property
    def dirty_path(self) -> Path: ...
    @property
    def manifest_path(self) -> Path: ...
    @property
    def chunking_hash(self) -> str: ...
    def scanner(self) -> Scanner: ...
    def mark_dirty(self) -> None: ...
    def write_info(self, skipped: Iterable[SkippedFile], res: _Result) -> None: ...


@dataclass
class _Run:
    """What the stage gathers while it runs."""

    hold: Hold | None = None
    res: ProcessResult = field(default_factory=ProcessResult)
    pages: int = 0
    problems: dict[str, SkippedFile] = field(default_factory=dict)
    indexed: set[str] = field(default_factory=set)


def run_ocr(
    vi: VaultIndex,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    only: Iterable[str] | None = None,
    hold: Hold | None = None,
) -> OcrStats:
    """Read the vault's images and scanned PDFs by OCR into its index; `only`: just these paths.

    The vault's writer locks (`hold`, this process's and the one across processes) are held only
    to find the work and to commit each file, not while OCR reads: a live edit is indexed
    between two images, not after the whole stage.
    """
    from core.vault.ocr_text import ocr_installed

    t0 = time.perf_counter()
    if "image" in vi.kinds_off or not ocr_installed():  # the switch (Settings › Files) is off, or the extra is missing
        return OcrStats(vi.vault.name)
    store = OcrStore(vi.dir)
    with _held(vi, hold):
        queue = _pending(vi, store, set(only) if only is not None else None)
    if not queue:
        return OcrStats(vi.vault.name, seconds=time.perf_counter() - t0)
    run = _Run(hold)
    from core.vault.extractor import PdfExtractor

    with PdfExtractor(vi.attachment_seconds) as extractor:
        _work(vi, store, extractor, queue, run, progress, cancel)
    with _held(vi, hold):
        _finish(vi, run)
    read = tuple(dict.fromkeys(run.res.reindexed))
    return OcrStats(
        vi.vault.name, read, run.pages, len(run.problems), len(queue), run.res.cancelled, time.perf_counter() - t0
    )


@contextmanager
def _held(vi: VaultIndex, hold: Hold | None) -> Iterator[None]:
    with ExitStack() as stack:
        if hold is not None:
            stack.enter_context(hold())
        stack.enter_context(vi.lock)
        stack.enter_context(vi.xlock.held(SYNC_WAIT_S))
        yield


def _pending(vi: VaultIndex, store: OcrStore, only: set[str] | None) -> list[ScanEntry]:
    """Images the index does not hold as they are, scans the keyword pass found without text,
    and scans with pages still unread."""
    no_text = {s.rel_path for s in vi.info.skipped if s.reason is SkipReason.NO_TEXT}
    settings = FolderSettings(Path(vi.vault.root))
    todo = []
    for entry in _entries(vi, only):
        rel = entry.rel_path
        rec = vi.files.get(rel)
        if attachment_kind(rel) == "image":
            same = rec is not None and (rec.size, rec.mtime_ns) == (entry.size, entry.mtime_ns)
            if (
                not same
                or rec is None
                or rec.confidentiality != settings.confidentiality(rel)
                or _unfinished(store, rel, rec.version)
            ):
                todo.append(entry)
        elif rel in no_text or (rec is not None and _unfinished(store, rel, rec.version)):
            todo.append(entry)
    return todo


def _entries(vi: VaultIndex, only: set[str] | None) -> list[ScanEntry]:
    """The images and PDFs to look at: the paths asked for, or what the sync just before listed
    (a vault is not walked twice a sync), or a walk of the vault."""
    if only is not None:
        scanner = vi.scanner()
        found = [scanner.classify(rel) for rel in sorted(only) if is_ocr_kind(rel)]
        return [e for e in found if isinstance(e, ScanEntry)]
    listed, vi.ocr_entries = vi.ocr_entries, None
    if listed is None:
        listed = [e for e in vi.scanner().scan().entries if is_ocr_kind(e.rel_path)]
    return listed


def _unfinished(store: OcrStore, rel_path: str, version: str) -> bool:
    record = store.get(rel_path, version)
    return record is not None and not record.complete


def _work(
    vi: VaultIndex,
    store: OcrStore,
    extractor: PdfExtractor,
    queue: list[ScanEntry],
    run: _Run,
    progress: Progress | None,
    cancel: threading.Event | None,
) -> None:
    """One request at a time, round-robin: a scan with pages left goes to the back of the queue."""
    settings = FolderSettings(Path(vi.vault.root))
    done, total = 0, len(queue)
    while queue:
        if cancel is not None and cancel.is_set():
            run.res.cancelled = True
            return
        entry = queue[0]
        try:
            finished = _one(vi, store, extractor, entry, settings, run, cancel)
        except FileNotFoundError:  # deleted since it was listed: the next sync removes it from the index
            finished = True
        except Exception as exc:  # noqa: BLE001 - the per-file boundary, as in the keyword pass
            run.problems[entry.rel_path] = parse_error(entry.rel_path, exc)
            finished = True
        if cancel is not None and cancel.is_set():  # the child was stopped mid-file: it stays in the queue
            run.res.cancelled = True
            return
        queue.pop(0)
        if finished:
            done += 1
        else:
            queue.append(entry)
        if progress is not None:
            progress(done, total, PHASE)


def _one(
    vi: VaultIndex,
    store: OcrStore,
    extractor: PdfExtractor,
    entry: ScanEntry,
    settings: FolderSettings,
    run: _Run,
    cancel: threading.Event | None,
) -> bool:
    """Read the file's next portion (nothing when the store has it all) and index what is read so far.
    Returns whether the file is finished."""
    version = file_version(entry.path)
    record = store.get(entry.rel_path, version)
    if record is None:
        store.drop(entry.rel_path)  # an older version's pages and pictures
        record = OcrRecord(entry.rel_path, version, 0, 0, ())
    if not record.complete:
        got = _read_portion(store, extractor, entry, record, cancel)
        if got is None:
            return False  # cancelled mid-request: the file stays in the queue
        run.pages += got.read_to - record.read_to
        record = got
        store.put(record)
    with _held(vi, run.hold):
        if entry.path.exists():  # not deleted meanwhile (the next sync removes it from the index then)
            vi.mark_dirty()  # the keyword index moves ahead of the manifest until `_finish` saves it
            _index(vi, entry, record, settings.confidentiality(entry.rel_path), run)
    return record.complete


def _read_portion(
    store: OcrStore, extractor: PdfExtractor, entry: ScanEntry, record: OcrRecord, cancel: threading.Event | None
) -> OcrRecord | None:
    """The record with the next portion read (or the reason OCR could not read the file); None if cancelled."""
    from core.vault.extractor import ExtractionFailure

    first = record.read_to + 1
    pages_dir = store.pages_dir(entry.rel_path) if attachment_kind(entry.rel_path) == "pdf" else None
    got = extractor.ocr(entry.path, first, PORTION_PAGES, pages_dir, cancel)
    if not isinstance(got, ExtractionFailure):
        unit_count = got.unit_count or 1
        return record.with_portion(got.ocr, unit_count, min(unit_count, first + PORTION_PAGES - 1))
    if cancel is not None and cancel.is_set():
        return None
    if first == 1:
        return OcrRecord(
            record.rel_path, record.version, record.unit_count, record.read_to, record.pages, (got.reason, got.detail)
        )
    # A later portion failed (over its time limit): its pages stay unread, the rest go on.
    return record.with_portion((), record.unit_count, min(record.unit_count, first + PORTION_PAGES - 1))


def _index(vi: VaultIndex, entry: ScanEntry, record: OcrRecord, level: str, run: _Run) -> None:
    """The file as a document of every page OCR has read so far, or its skip with the reason."""
    rel = entry.rel_path
    if record.problem is not None or (record.complete and not record.pages):
        reason, detail = record.problem or ("no_text", "OCR found no text in it")
        run.problems[rel] = SkippedFile(rel, SkipReason(reason), detail)
        if rel in vi.files:
            run.res.removed_paths.append(rel)
            vi.intake.commit_each([], [rel], run.res)
        return
    if not record.pages:
        return  # a scan's first portion had no text: nothing to index yet
    src = AttachmentSource(vi.vault.name, rel, entry.path, entry.size, entry.mtime_ns, record.version, level)
    left = f"OCR has read pages 1–{record.read_to} of {record.unit_count} so far; the rest are read next"
    text = KindText(
        None, tuple(PdfPage(p.number, p.text) for p in record.pages), notes=() if record.complete else (left,)
    )
    doc: Document = units_document(src, text, vi.limits)
    earlier = [w for w in run.res.warnings if w.rel_path != rel]  # an earlier portion's "read so far" goes
    run.res.warnings[:] = earlier + list(doc.warnings)
    run.res.reindexed.extend(vi.intake.commit_each([doc], [], run.res))
    run.indexed.add(rel)


def _finish(vi: VaultIndex, run: _Run) -> None:
    """Save the manifest and Index health: skips of files now indexed go, OCR's own skips join."""
    res = run.res
    res.touched = bool(res.reindexed or res.removed_paths)
    if res.touched or vi.is_dirty:
        save_manifest(vi.manifest_path, vi.chunking_hash, vi.files)
        vi.links.save()
    done = run.indexed | set(run.problems)
    skipped = [s for s in vi.info.skipped if s.rel_path not in done] + list(run.problems.values())
    vi.write_info(skipped, res)
    if vi.recovery is None:  # memory and disk agree now (under the lock): nothing to reconcile on start
        vi.dirty_path.unlink(missing_ok=True)
