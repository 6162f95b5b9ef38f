"""Cancel during OCR: the status bar says OCR is paused and where, Resume reads only the rest.

Real OCR in its child process on three pictures of text; skipped without the `ocr` extra.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.base.paths import AppPaths
from core.base.vault_state import Phase
from core.engine import Engine
from core.vault.ocr_text import ocr_installed
from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import text_picture

pytestmark = [
    pytest.mark.skipif(not ocr_installed(), reason="the ocr extra (rapidocr-onnxruntime) is not installed"),
    pytest.mark.slow,  # OCR takes seconds an image on the loaded 2-core machine
]
WORDS = ("okapi", "pangolin", "axolotl")


@pytest.fixture
def vault(tmp_path: Path, qapp: Any) -> Path:
    root = tmp_path / "pictures"
    root.mkdir()
    (root / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    for word in WORDS:
        text_picture(root / f"{word}.png", [f"The {word} sleeps here"], (700, 130))
    setup = Engine(AppPaths.from_env(), embedder_factory=None)
    setup.add_vault(root, name="pictures")
    setup.update_config(replace(setup.config, kinds_off=()))  # OCR switched on (Settings › Files)
    setup.close()
    return root


def test_cancel_during_ocr_pauses_it_and_resume_reads_only_the_rest(
    qtbot: Any, make_controller: Callable[..., AppController], vault: Path
) -> None:
    controller = make_controller()
    window = MainWindow(controller, vault)
    qtbot.addWidget(window)
    window.show()
    reports: list[Any] = []
    controller.indexFinished.connect(reports.append)

    def cancel_after_one(vault_name: str, done: int, total: int, phase: str) -> None:
        if phase == "ocr" and done >= 1:
            controller.cancel_index()

    controller.indexProgress.connect(cancel_after_one)
    controller.index()
    qtbot.waitUntil(lambda: bool(reports), timeout=180_000)
    (report,) = reports[0]
    assert report.ocr is not None and report.ocr.cancelled and len(report.ocr.read) == 1
    status = window.status
    p = controller.board.get("pictures")
    assert p is not None and p.phase is Phase.OCR_PAUSED and (p.done, p.total) == (1, 3)
    assert "reading images paused at 1/3" in status.vaults.text()
    qtbot.waitUntil(status.resume.isVisible)
    controller.indexProgress.disconnect(cancel_after_one)
    reports.clear()
    status.resume.click()
    qtbot.waitUntil(lambda: bool(reports), timeout=180_000)
    (report,) = reports[0]
    assert report.keyword.added == report.keyword.changed == 0  # the notes were not read again
    assert report.ocr is not None and not report.ocr.cancelled and len(report.ocr.read) == 2  # only the rest
    qtbot.waitUntil(lambda: not status.resume.isVisible())
    p = controller.board.get("pictures")
    assert p is not None and p.phase is not Phase.OCR_PAUSED and "paused" not in status.vaults.text()
