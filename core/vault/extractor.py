"""Take text out of PDFs in a child process, with a time limit per document.

PDFium is C++: a malformed file can crash it or make it loop, and either would take
the whole app down if it ran in-process. One long-lived child (spawned on the first
PDF of a sync, ~0.3 s) extracts document after document; when it dies or runs over
the time limit it is killed, the file is skipped with that reason, and a new child
serves the next file. Where no child can be started (inside a daemonic process, such
as the first-index child of `core.index.child_sync`, which is itself isolated), the
text is taken out in-process, and a PDF that runs over the time limit ends that
process: its parent then indexes in its own process, where this extractor has a child.

Every kind Cairn reads beside notes (`core.vault.kinds`: PDFs, Word, e-books, web pages,
mail, chat exports) goes through this child. Besides the time limit the child has a memory
limit (`RLIMIT_AS`, where the system has one: Linux and the BSDs; macOS does not enforce it
and Windows has no such call, so there the time limit alone bounds a hostile file): a
file that needs more (an XML entity bomb, a giant message) fails in the child with
`MemoryError` and is skipped as `too_large`, while the app keeps its memory.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.vault.kinds import KindText, OcrLine, OcrPage, kind_of
from core.vault.pdf import PdfPage, PdfProblem
from core.vault.readers import OCR, extract, extract_ocr

DEFAULT_SECONDS = 120.0
DEFAULT_MEMORY_BYTES = 2 * 1024 * 1024 * 1024  # the child's address space: Python, PDFium and lxml need ~300 MB of it
# A mailbox's extra time. bench/bench_kinds.py read 1 KB messages at 0.7 MB/s on the loaded 2-core
# machine; bigger messages read faster, and a mailbox of tiny ones stops at its text cap first.
STREAMED_BYTES_PER_SECOND = 1024 * 1024
OCR_TIME_FACTOR = 3  # with OCR on, a PDF (it may be a scan) or an image gets three times the limit
HUNG_EXIT_CODE = 75  # a daemonic indexing child that ran into a hung PDF ends with this
POLL_SECONDS = 0.1  # how often a wait for the child looks at the cancel flag


@dataclass(frozen=True, slots=True)
class ExtractionFailure:
    reason: str  # a SkipReason value
    detail: str


def _serve(conn: Any, memory_bytes: int = DEFAULT_MEMORY_BYTES, ocr: bool = False) -> None:
    """The child's loop: one path in, one plain-data answer out, until told to stop."""
    limit_memory(memory_bytes)
    OCR["on"] = ocr
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        conn.send(_extract_plain(request))


def limit_memory(memory_bytes: int) -> None:
    """Cap this (child) process's address space, where the system allows it."""
    try:
        import resource
    except ImportError:  # Windows
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):  # macOS refuses some values; the time limit still holds
        return


def _extract_plain(request: str | tuple[str, int, int | None, str | None]) -> tuple[Any, ...]:
    """A path: the file's text. A tuple (path, first page, page count, pages folder): OCR of an
    image or of a scanned PDF's next portion (`PdfExtractor.ocr`)."""
    # Plain tuples cross the pipe: no class identity to keep in step between processes.
    path = request if isinstance(request, str) else request[0]
    kind = kind_of(Path(path).name)
    try:
        if isinstance(request, str):
            text = extract(kind.name if kind is not None else "pdf", Path(path))
        else:
            text = extract_ocr(Path(path), request[1], request[2], Path(request[3]) if request[3] else None)
    except PdfProblem as exc:
        return ("problem", exc.reason, str(exc))
    except MemoryError:
        return ("problem", "too_large", "reading it needed more memory than the extractor's limit")
    except RecursionError:
        return ("problem", "malformed", "nested too deeply to read")
    except OSError as exc:
        return ("problem", "unreadable", f"cannot read file: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - any parser failure is this file's problem only
        return ("problem", "malformed", f"{type(exc).__name__}: {exc}")
    pages = [(p.number, p.text, p.sections) for p in text.pages]
    ocr = [(o.number, o.width, o.height, [(line.text, *line.box) for line in o.lines]) for o in text.ocr]
    return ("ok", text.title, text.dropped_lines, pages, text.date, text.notes, ocr, text.unit_count)


def _from_plain(answer: tuple[Any, ...]) -> KindText | ExtractionFailure:
    if answer[0] == "problem":
        return ExtractionFailure(answer[1], answer[2])
    _, title, dropped, pages, date, notes, ocr, unit_count = answer
    read = tuple(OcrPage(n, w, h, tuple(OcrLine(t, (x0, y0, x1, y1)) for t, x0, y0, x1, y1 in lines)) for n, w, h, lines in ocr)
    return KindText(title, tuple(PdfPage(n, t, tuple(s)) for n, t, s in pages), dropped, date, tuple(notes), read, unit_count)


class PdfExtractor:
    """Extract attachments (PDFs and the other kinds) one at a time in a child process. Use as a context manager."""

    _target: Any = staticmethod(_serve)  # the child's main loop (tests swap in one that dies)

    def __init__(
        self, seconds: float = DEFAULT_SECONDS, *, isolate: bool = True, memory_bytes: int = DEFAULT_MEMORY_BYTES, ocr: bool = False
    ) -> None:
        self.seconds = seconds
        self.ocr_on = ocr  # scanned PDFs by OCR in `extract` too (core.vault.ocr_text)
        self.memory_bytes = memory_bytes
        in_daemon = multiprocessing.current_process().daemon
        self.isolate = isolate and not in_daemon
        self._end_process_on_hang = in_daemon
        self._proc: Any = None
        self._conn: Any = None

    def __enter__(self) -> PdfExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def extract(self, path: Path, cancel: threading.Event | None = None) -> KindText | ExtractionFailure:
        """The PDF's text, or why not. A set `cancel` stops the child at once (a 3,000-page
        manual takes seconds; quitting the app must not wait for it)."""
        return self._ask(str(path), path, cancel)

    def ocr(
        self, path: Path, first: int = 1, count: int | None = None, pages_dir: Path | None = None, cancel: threading.Event | None = None
    ) -> KindText | ExtractionFailure:
        """An image's text, or `count` pages of a scanned PDF from page `first`, by OCR in the child
        (whose priority is the lowest). A set `cancel` stops it at once."""
        return self._ask((str(path), first, count, str(pages_dir) if pages_dir is not None else None), path, cancel)

    def _ask(self, request: str | tuple[str, int, int | None, str | None], path: Path, cancel: threading.Event | None) -> KindText | ExtractionFailure:
        if cancel is not None and cancel.is_set():
            return ExtractionFailure("parser_failed", "cancelled")
        if not self.isolate:
            seconds = self.limit_for(path, ocr=not isinstance(request, str))
            guard = threading.Timer(seconds, os._exit, args=(HUNG_EXIT_CODE,)) if self._end_process_on_hang else None
            if guard is not None:
                guard.daemon = True
                guard.start()
            OCR["on"] = self.ocr_on
            try:
                return _from_plain(_extract_plain(request))
            finally:
                if guard is not None:
                    guard.cancel()
        try:
            self._start()
        except (OSError, RuntimeError) as exc:  # no child (spawn refused, no memory): this file is skipped, said why
            return ExtractionFailure("parser_failed", f"the text extractor could not start: {exc}")
        try:
            self._conn.send(request)
            seconds = self.limit_for(path, ocr=not isinstance(request, str))
            deadline = time.monotonic() + seconds
            while not self._conn.poll(min(POLL_SECONDS, max(0.0, deadline - time.monotonic()))):
                if cancel is not None and cancel.is_set():
                    self._kill()
                    return ExtractionFailure("parser_failed", "cancelled")
                if time.monotonic() >= deadline:
                    self._kill()
                    return ExtractionFailure("parser_failed", f"taking the text out took longer than {seconds:g} s; stopped")
            return _from_plain(self._conn.recv())
        except (EOFError, OSError, BrokenPipeError):
            if self._proc is not None:
                self._proc.join(5)
            code = self._proc.exitcode if self._proc is not None else None
            self._kill()
            return ExtractionFailure("parser_failed", f"the parser crashed on this file (exit code {code})")

    def limit_for(self, path: Path, *, ocr: bool = False) -> float:
        """The time limit for one file: a mailbox is streamed message by message, so it gets a
        second more per MB (a 1 GB mailbox ~20 minutes); other kinds have the flat limit."""
        kind = kind_of(path.name)
        if kind is not None and (kind.name == "image" or (kind.name == "pdf" and (self.ocr_on or ocr))):
            return self.seconds * OCR_TIME_FACTOR  # OCR of a scan: seconds a page at the lowest priority
        if kind is None or kind.name != "email":
            return self.seconds
        try:
            return round(self.seconds + path.stat().st_size / STREAMED_BYTES_PER_SECOND)
        except OSError:
            return self.seconds

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            self._conn.send(None)
            self._proc.join(2)
        except (OSError, BrokenPipeError):
            pass
        self._kill()

    def _start(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        self._kill()
        ctx = multiprocessing.get_context("spawn")  # fork is unsafe beside Qt's and the watcher's threads
        conn, child = ctx.Pipe()
        proc = ctx.Process(target=self._target, args=(child, self.memory_bytes, self.ocr_on), daemon=True, name="cairn-extract")
        try:
            proc.start()
        finally:
            child.close()
        # kept only once started: `close` and `_kill` join what they hold, and an unstarted process cannot be joined
        self._proc, self._conn = proc, conn

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(5)
            self._proc.close()
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None
