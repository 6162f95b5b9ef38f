"""A result OCR found in an image: the Preview shows the image with the lines holding the query's
words boxed, and nothing boxed for a word that is not on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QFont, QImage, QPainter

from core.base.paths import AppPaths
from core.engine import Engine
from core.vault.kinds import OcrLine, OcrPage
from core.vault.ocr_text import ocr_installed
from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.panels.preview_ocr import marked_picture
from tests.desktop.helpers import search_and_wait
from tests.desktop.helpers import text_picture as draw_lines

LINES = ("The okapi lives in the Ituri forest.", "Pangolins eat ants at night.")


def text_picture(path: Path) -> Path:
    """A PNG of two lines of black text on white, drawn with Qt (no Pillow needed)."""
    return draw_lines(path, LINES, (900, 220))


def is_marked(image: QImage, x: int, y: int) -> bool:
    """A white background pixel under a mark turns yellow (blue drops, red stays high)."""
    pixel = image.pixelColor(x, y)
    return pixel.red() > 200 and pixel.blue() < 200


def test_the_picture_boxes_only_the_lines_that_hold_a_query_word(qapp: Any, tmp_path: Path) -> None:
    source = text_picture(tmp_path / "shot.png")
    page = OcrPage(1, 900, 220, (OcrLine(LINES[0], (18.0, 45.0, 700.0, 92.0)), OcrLine(LINES[1], (18.0, 135.0, 600.0, 182.0))))
    picture = marked_picture(source, page, "okapi", room=1000)
    assert picture is not None and picture.lines == (LINES[0],) and len(picture.marks) == 1
    assert (picture.image.width(), picture.image.height()) == (900, 220)
    assert is_marked(picture.image, 16, 60) and not is_marked(picture.image, 16, 150)  # left of line 1, left of line 2
    pangolin = marked_picture(source, page, "pangolin", room=450)  # a word's start: "Pangolins"
    assert pangolin is not None and pangolin.lines == (LINES[1],) and pangolin.image.width() == 450  # fits the view
    none = marked_picture(source, page, "zebra", room=1000)
    assert none is not None and none.marks == () and not is_marked(none.image, 16, 60)


def ocr_window(qtbot: Any, make_controller: Callable[..., AppController], vault: Path) -> MainWindow:
    """The main window on `vault`, indexed with OCR switched on (Settings › Files)."""
    setup = Engine(AppPaths.from_env(), embedder_factory=None)
    setup.add_vault(vault, name=vault.name)
    setup.update_config(replace(setup.config, kinds_off=()))
    setup.close()
    controller = make_controller()
    window = MainWindow(controller, vault)
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    finished: list[Any] = []
    controller.indexFinished.connect(finished.append)
    controller.index()
    qtbot.waitUntil(lambda: bool(finished), timeout=180_000)
    return window


@pytest.mark.skipif(not ocr_installed(), reason="the ocr extra (rapidocr-onnxruntime) is not installed")
def test_preview_shows_the_image_with_the_query_words_boxed(qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path) -> None:
    vault = tmp_path / "zoo"
    vault.mkdir()
    (vault / "Garden.md").write_text("# Garden\n\nPlant the zucchini in May.\n")
    text_picture(vault / "shot.png")
    window = ocr_window(qtbot, make_controller, vault)
    controller = window.controller
    search_and_wait(qtbot, window, "okapi")
    assert controller.selected is not None and controller.selected.chunk.rel_path == "shot.png"
    preview = window.preview
    qtbot.waitUntil(lambda: preview.ocr.shown is not None)
    shown = preview.ocr.shown
    assert shown is not None and len(shown.marks) == 1 and "okapi" in shown.lines[0]
    assert shown.marks[0].bottom() < 125  # around the first line (drawn at y 50-90), not the second (140-180)
    doc = preview.browser.document()
    assert doc.toPlainText().startswith("\ufffc")  # the picture is the document's first character
    assert "Ituri forest" in doc.toPlainText()
    # "ants" is only on the second line: the box moves there.
    search_and_wait(qtbot, window, "ants")
    qtbot.waitUntil(lambda: preview.ocr.shown is not None and preview.ocr.shown.lines != shown.lines)
    assert preview.ocr.shown is not None and preview.ocr.shown.marks[0].top() > 115


@pytest.mark.skipif(not ocr_installed(), reason="the ocr extra (rapidocr-onnxruntime) is not installed")
def test_a_scanned_page_shows_its_saved_picture_with_the_word_boxed(qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path) -> None:
    from PIL import Image

    vault = tmp_path / "marsh"
    vault.mkdir()
    pages = [tmp_path / "p1.png", tmp_path / "p2.png"]
    text_picture(pages[0])
    image = QImage(900, 220, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    font = QFont("DejaVu Sans")
    font.setPixelSize(40)
    painter.setFont(font)
    painter.drawText(20, 170, "Bitterns boom in the reeds.")
    painter.end()
    image.save(str(pages[1]))
    first, second = (Image.open(p).convert("RGB") for p in pages)
    first.save(vault / "scan.pdf", "PDF", resolution=72, save_all=True, append_images=[second])  # no text layer
    window = ocr_window(qtbot, make_controller, vault)
    search_and_wait(qtbot, window, "bitterns")
    hit = window.controller.selected
    assert hit is not None and hit.chunk.rel_path == "scan.pdf" and hit.page == 2
    preview = window.preview
    qtbot.waitUntil(lambda: preview.ocr.shown is not None)
    shown = preview.ocr.shown
    assert shown is not None and shown.lines == ("Bitterns boom in the reeds.",)
    assert shown.marks[0].top() > 200  # in the page's OCR pixels (rendered at 144 dpi): the lower half
    assert abs(shown.image.height() / shown.image.width() - 220 / 900) < 0.02  # the whole page, fitted to the view
    assert "page 2 of 2" in preview.header.text()


def test_no_box_for_a_word_that_is_not_on_the_image(qapp: Any, tmp_path: Path) -> None:
    source = text_picture(tmp_path / "shot.png")
    page = OcrPage(1, 900, 220, (OcrLine(LINES[0], (18.0, 45.0, 700.0, 92.0)),))
    for query in ("giraffe", "tag:okapi", "-okapi", ""):
        picture = marked_picture(source, page, query, room=1000)
        assert picture is not None and picture.marks == (), query
