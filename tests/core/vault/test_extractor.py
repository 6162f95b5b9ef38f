"""The PDF extractor's child process: answers, time limits and crashes never reach the caller."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.vault.extractor import ExtractionFailure, PdfExtractor
from core.vault.kinds import KindText as PdfText
from tests.pdf_writer import write_pdf


def test_extracts_in_a_child_and_reuses_it(tmp_path: Path) -> None:
    a = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    b = write_pdf(tmp_path / "b.pdf", [["Trout rise at dusk."], ["Pike hunt from cover."]])
    with PdfExtractor(60) as ex:
        first = ex.extract(a)
        pid = ex._proc.pid
        second = ex.extract(b)
        assert ex._proc.pid == pid  # one child serves document after document
        assert ex._proc.pid != os.getpid()
    assert isinstance(first, PdfText) and "Herons nest" in first.pages[0].text
    assert isinstance(second, PdfText) and [p.number for p in second.pages] == [1, 2]
    assert ex._proc is None  # closed on exit: no child left behind


def test_problems_come_back_as_reasons(tmp_path: Path) -> None:
    locked = write_pdf(tmp_path / "locked.pdf", [["x"]], encrypted=True)
    with PdfExtractor(60) as ex:
        got = ex.extract(locked)
        assert got == ExtractionFailure("encrypted", "the PDF is protected by a password")
        missing = ex.extract(tmp_path / "gone.pdf")
        assert isinstance(missing, ExtractionFailure) and missing.reason == "unreadable"


def test_over_the_time_limit_the_child_is_stopped_and_the_next_file_still_works(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    with PdfExtractor(0.001) as ex:  # shorter than starting the child: the wait runs out
        got = ex.extract(path)
        assert isinstance(got, ExtractionFailure) and got.reason == "parser_failed"
        assert "longer than" in got.detail
        assert ex._proc is None  # killed, not left running
        ex.seconds = 60
        assert isinstance(ex.extract(path), PdfText)


class _Crashing(PdfExtractor):
    _target = staticmethod(os.abort)  # the child dies at once, as a parser crash would kill it


def test_a_crashing_parser_is_reported_not_raised(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    with _Crashing(60) as ex:
        got = ex.extract(path)
    assert isinstance(got, ExtractionFailure) and got.reason == "parser_failed"
    assert "crashed" in got.detail


def test_in_process_when_no_child_may_be_started(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    with PdfExtractor(60, isolate=False) as ex:
        got = ex.extract(path)
        assert ex._proc is None
    assert isinstance(got, PdfText)


def test_cancel_stops_the_child_at_once(tmp_path: Path) -> None:
    import threading
    import time

    path = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    cancel = threading.Event()
    cancel.set()
    with PdfExtractor(60) as ex:
        t0 = time.monotonic()
        got = ex.extract(path, cancel)
        assert time.monotonic() - t0 < 5  # not the 60 s limit
        assert got == ExtractionFailure("parser_failed", "cancelled") and ex._proc is None


def _hang_in_a_daemon(path: str) -> None:
    """Runs in a daemonic child: the parser 'hangs' (a stand-in that sleeps) on the one PDF."""
    import time

    import core.vault.extractor as extractor

    extractor._extract_plain = lambda p: time.sleep(60)  # type: ignore[assignment]
    extractor.PdfExtractor(0.5).extract(Path(path))


def test_inside_a_daemonic_child_a_hang_ends_that_process(tmp_path: Path) -> None:
    import multiprocessing

    from core.vault.extractor import HUNG_EXIT_CODE

    path = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    proc = multiprocessing.get_context("spawn").Process(target=_hang_in_a_daemon, args=(str(path),), daemon=True)
    proc.start()
    proc.join(30)
    assert proc.exitcode == HUNG_EXIT_CODE  # not still running after 30 s: the parent can fall back


def test_a_mailbox_gets_more_time_by_its_size(tmp_path: Path) -> None:
    box = tmp_path / "big.mbox"
    with box.open("wb") as fh:
        fh.truncate(300 * 1024 * 1024)  # sparse: only the size matters here
    note = tmp_path / "a.pdf"
    note.write_bytes(b"%PDF")
    ex = PdfExtractor(120)
    assert ex.limit_for(box) == 420 and ex.limit_for(note) == 120


def test_a_child_that_cannot_start_is_a_reason_and_the_next_file_still_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spawn can refuse (a main module without its `__main__` guard, no memory): the file is skipped
    with that reason, and closing does not fail joining a process that never started."""
    import multiprocessing.context

    path = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    real_start = multiprocessing.context.SpawnProcess.start

    def refuse(self: object) -> None:
        raise RuntimeError("An attempt has been made to start a new process before bootstrapping")

    with PdfExtractor(60) as ex:
        monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", refuse)
        got = ex.extract(path)
        assert isinstance(got, ExtractionFailure) and got.reason == "parser_failed"
        assert "could not start" in got.detail and ex._proc is None
        monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", real_start)
        again = ex.extract(path)
        assert isinstance(again, PdfText) and "Herons nest" in again.pages[0].text
