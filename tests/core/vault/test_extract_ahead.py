"""Attachments taken out ahead of the indexer: the same answers, bounded, and stopped at once on close."""

from __future__ import annotations

import time
from concurrent.futures import wait
from pathlib import Path

from core.vault.attachments import AttachmentReading
from core.vault.extract_ahead import ExtractAhead
from core.vault.extractor import PdfExtractor
from core.vault.kinds import KindText
from tests.pdf_writer import write_pdf


def _pdfs(tmp_path: Path) -> list[tuple[Path, int]]:
    a = write_pdf(tmp_path / "a.pdf", [["Herons nest in colonies."]])
    b = write_pdf(tmp_path / "b.pdf", [["Trout rise at dusk."], ["Pike hunt from cover."]])
    return [(a, a.stat().st_size), (b, b.stat().st_size)]


def test_files_are_taken_out_before_they_are_asked_for_with_the_same_answers(tmp_path: Path) -> None:
    files = _pdfs(tmp_path)
    with PdfExtractor(60) as direct:
        expected = [direct.extract(path) for path, _ in files]
    with PdfExtractor(60) as ex:
        ahead = ExtractAhead(lambda: ex)
        ahead.start(files)
        done, pending = wait(list(ahead._ahead.values()), timeout=60)
        assert len(done) == 2 and not pending  # both answered while nobody asked
        got = [ahead.extract(path) for path, _ in reversed(files)][::-1]  # asked in another order: still its own answer
        ahead.close()
    assert got == expected
    assert isinstance(got[1], KindText) and [p.number for p in got[1].pages] == [1, 2]


def test_only_what_fits_the_budget_is_taken_out_ahead_and_the_rest_on_demand(tmp_path: Path) -> None:
    files = _pdfs(tmp_path)
    with PdfExtractor(60) as ex:
        ahead = ExtractAhead(lambda: ex)
        ahead.start(files, budget=files[0][1])
        assert list(ahead._ahead) == [files[0][0]]
        later = ahead.extract(files[1][0])  # not queued: taken out now, on the same thread
        ahead.close()
    assert isinstance(later, KindText) and "Pike hunt" in later.pages[1].text


def test_closing_stops_the_work_ahead_at_once_and_leaves_no_child(tmp_path: Path) -> None:
    files = _pdfs(tmp_path) * 20  # 40 extractions queued
    reading = AttachmentReading(tmp_path, 60)
    reading.extract_ahead(files)
    extractor = reading.extractor
    time.sleep(0.2)  # the first one under way
    t0 = time.monotonic()
    reading.close()
    assert time.monotonic() - t0 < 5  # not 40 extractions, not a time limit
    assert extractor._proc is None
