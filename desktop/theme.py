"""Colours the panels add to Qt's own, picked for the palette in use.

Qt follows the system's light or dark appearance (macOS and Windows both have one),
but colours a panel sets itself do not: a fixed light-yellow chunk highlight under
a dark theme's light text, or a #555 hint on a dark window, cannot be read. Each
panel asks for `colours(widget.palette())` when it renders.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QPalette


@dataclass(frozen=True)
class Colours:
    """Hex colours for rich text, QColors for text-document formats."""

    dim: str  # secondary text: hints, property names
    error: str
    warn: str
    ok: str
    highlight: QColor  # background of the previewed chunk (text keeps the palette's colour)
    chip_bg: QColor  # a citation chip in an answer
    chip_fg: QColor


LIGHT = Colours(
    dim="#616161",
    error="#b00020",
    warn="#8a6100",
    ok="#1b5e20",
    highlight=QColor(255, 243, 176),
    chip_bg=QColor(221, 233, 250),
    chip_fg=QColor(23, 78, 166),
)
DARK = Colours(
    dim="#a8a8a8",
    error="#ff8a80",
    warn="#ffcc66",
    ok="#81c784",
    highlight=QColor(84, 68, 16),
    chip_bg=QColor(36, 56, 92),
    chip_fg=QColor(170, 204, 255),
)


def is_dark(palette: QPalette) -> bool:
    """A dark appearance: the window background is darker than its text."""
    return palette.color(QPalette.ColorRole.Window).lightness() < palette.color(QPalette.ColorRole.WindowText).lightness()


def colours(palette: QPalette) -> Colours:
    return DARK if is_dark(palette) else LIGHT


def contrast(a: QColor, b: QColor) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21; body text wants at least 4.5)."""

    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
