"""Colours the panels add stay readable in a light and a dark appearance (macOS and Windows both have one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor, QPalette, QTextCursor

from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.theme import DARK, LIGHT, Colours, colours, contrast, is_dark
from tests.desktop.helpers import index_vault, search_and_wait


def palette(window: str, text: str, base: str) -> QPalette:
    pal = QPalette()
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        pal.setColor(group, QPalette.ColorRole.Window, QColor(window))
        pal.setColor(group, QPalette.ColorRole.WindowText, QColor(text))
        pal.setColor(group, QPalette.ColorRole.Base, QColor(base))
        pal.setColor(group, QPalette.ColorRole.Text, QColor(text))
    return pal


LIGHT_PALETTE = palette("#efefef", "#000000", "#ffffff")
DARK_PALETTE = palette("#2d2d2d", "#e8e8e8", "#1e1e1e")  # about what macOS and Windows dark modes give Qt


@pytest.mark.parametrize(("pal", "expected"), [(LIGHT_PALETTE, LIGHT), (DARK_PALETTE, DARK)], ids=["light", "dark"])
def test_every_added_colour_reads_at_body_text_contrast(pal: QPalette, expected: Colours) -> None:
    theme = colours(pal)
    assert theme is expected and is_dark(pal) == (expected is DARK)
    text = pal.color(QPalette.ColorRole.Text)
    assert contrast(text, theme.highlight) >= 4.5  # the previewed chunk: palette text on our background
    assert contrast(theme.chip_fg, theme.chip_bg) >= 4.5
    for background in (pal.color(QPalette.ColorRole.Window), pal.color(QPalette.ColorRole.Base)):
        for name in ("dim", "error", "warn", "ok"):
            assert contrast(QColor(getattr(theme, name)), background) >= 4.5, name


def test_the_light_colours_would_not_do_in_the_dark() -> None:
    """Why the theme exists: the light highlight under dark-mode text is unreadable."""
    assert contrast(DARK_PALETTE.color(QPalette.ColorRole.Text), LIGHT.highlight) < 2
    assert contrast(QColor("#555555"), DARK_PALETTE.color(QPalette.ColorRole.Window)) < 2


def test_contrast_matches_wcag_reference_values() -> None:
    assert contrast(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)
    assert contrast(QColor("#777777"), QColor("#ffffff")) == pytest.approx(4.48, abs=0.01)
    assert contrast(QColor("#123456"), QColor("#123456")) == pytest.approx(1.0)


def test_in_a_dark_window_the_preview_highlights_the_chunk_readably(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path
) -> None:
    controller = make_controller()
    window = make_window(controller)
    window.setPalette(DARK_PALETTE)
    index_vault(qtbot, controller, sample_vault)
    search_and_wait(qtbot, window, '"stretch and folds"')
    preview = window.preview
    assert preview.chunk_range is not None
    cursor = QTextCursor(preview.browser.document())
    cursor.setPosition(preview.chunk_range[0])
    background = cursor.blockFormat().background().color()
    assert background == DARK.highlight
    assert contrast(preview.browser.palette().color(QPalette.ColorRole.Text), background) >= 4.5


def test_switching_to_dark_while_running_recolours_the_hints(
    make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    window = make_window(make_controller())  # no vault: the welcome view
    assert LIGHT.dim in window.welcome.hint.styleSheet() and LIGHT.dim in window.ask.model_label.styleSheet()
    window.setPalette(DARK_PALETTE)  # what Qt does when the system appearance changes
    assert DARK.dim in window.welcome.hint.styleSheet() and DARK.dim in window.ask.model_label.styleSheet()
