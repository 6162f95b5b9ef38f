"""Room for the Ask pane: widen it over the results, or pop it out into its own window and back.

At 1280×800 the answer box was ~270×170 px: the Ask tab shares the window with the
tree and the results, and the conversation list and the sources squeezed it further.
`AskRoom` gives the pane the window's width on request ("Wider") and lets it live
in a window of its own ("Pop out"); closing that window puts the pane back in its tab.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QFileDialog, QLabel, QSizePolicy, QSplitter, QTabWidget, QVBoxLayout, QWidget

from core.answer.models import AskRequest, Reference
from core.base.models import ChunkRef, Hit
from desktop.app_state import Scope

ASK_SPLIT = [54, 600, 120]  # conversation list, answer, sources: starting heights (the answer takes what is left)
LIST_MIN_H = 40  # the conversation list may be dragged down to this (or folded away)
SOURCES_MIN_H = 90  # the sources list beside the why of the chosen one: a label and a few rows
WIDE_SHARE = 0.8  # "Wider": the details pane's share of the main splitter (the tree folds away)
ASK_TAB = "Ask"


def ask_splitter(parent: QWidget, conversation: QWidget, answer: QWidget, sources: QWidget) -> QSplitter:
    """Conversation list | answer | sources, each draggable; the answer takes most of the height.

    The conversation list used to sit above the answer with a fixed height and, after
    two questions, left the answer four lines; now it is one splitter part that starts small.
    """
    splitter = QSplitter(Qt.Orientation.Vertical, parent)
    conversation.setMinimumHeight(LIST_MIN_H)
    sources.setMinimumHeight(SOURCES_MIN_H)
    for i, (widget, stretch) in enumerate(((conversation, 0), (answer, 6), (sources, 1))):
        splitter.addWidget(widget)
        splitter.setStretchFactor(i, stretch)
        splitter.setCollapsible(i, i != 1)
    splitter.setSizes(ASK_SPLIT)
    return splitter


def save_path_dialog(parent: QWidget, first_question: str) -> Path | None:
    """Where to save a conversation: Documents by default (never a vault), named after its first question."""
    folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation) or str(Path.home())
    name = "".join(c if c.isalnum() or c in " -_" else " " for c in first_question).strip()[:60] or "conversation"
    chosen, _ = QFileDialog.getSaveFileName(parent, "Save conversation", str(Path(folder) / f"{name}.md"), "Markdown (*.md)")
    if not chosen:
        return None
    path = Path(chosen)
    return path if path.suffix else path.with_suffix(".md")


def squeezable(*labels: QLabel) -> None:
    """Labels that give way (clipped) instead of setting the pane's minimum width by their text."""
    for label in labels:
        label.setSizePolicy(QSizePolicy.Policy.Ignored, label.sizePolicy().verticalPolicy())
        label.setMinimumWidth(40)


def scope_parts(scope: Scope | None) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The vaults, folders and path prefixes a question is asked of: the tree's scope, as search applies it."""
    if scope is None:
        return (), (), ()
    return (scope.vault,), ((scope.folder,) if scope.folder else ()), ((scope.prefix,) if scope.prefix else ())


def request_scope(request: AskRequest | None) -> str:
    """The notes a question was asked of, as the header shows it ("all vaults", "work/projects")."""
    if request is None or not request.vaults:
        return "all vaults"
    vaults = ", ".join(request.vaults)
    if len(request.vaults) == 1 and request.path_prefixes:  # a dotted-name node, labelled as `Scope.label` does
        return f"{vaults}/{request.path_prefixes[0]}*"
    return f"{vaults}/{request.folders[0]}" if len(request.vaults) == 1 and request.folders else vaults


def scope_header(current: str, answered: str | None) -> str:
    """"In: all vaults"; once an answer shows, the notes *it* came from, and the next question's when they differ."""
    if answered is None or answered == current:
        return f"In: {current}"
    return f"Answer from: {answered} · next question in: {current}"


def reference_hit(ref: Reference) -> Hit:
    """A closest note of an abstention as a hit the Preview can open at its passage."""
    return Hit(
        chunk=ChunkRef(ref.vault, ref.rel_path, ref.chunk_ordinal, ref.heading_path),
        score=0.0,
        title=ref.title or ref.rel_path,
        snippet="",
        start_byte=ref.start_byte,
        end_byte=ref.end_byte,
        bm25=None,
        vector=None,
        contributions=(),
        page=ref.page,
    )


class _AskWindow(QWidget):
    """The popped-out Ask pane's own window; closing it hands the pane back."""

    closing = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("Cairn — Ask my notes")
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        self.closing.emit()
        super().closeEvent(event)


class AskRoom(QObject):
    """Widens the details pane or moves the Ask pane between its tab and a window of its own."""

    def __init__(self, pane: QWidget, tabs: QTabWidget, splitter: QSplitter, parent: QWidget) -> None:
        super().__init__(parent)
        self._pane, self._tabs, self._splitter, self._owner = pane, tabs, splitter, parent
        self.window: _AskWindow | None = None
        self._narrow: list[int] | None = None  # the splitter's sizes before "Wider"

    @property
    def detached(self) -> bool:
        return self.window is not None

    @property
    def wide(self) -> bool:
        return self._narrow is not None

    def toggle_wide(self) -> None:
        """Give the details pane most of the window's width, or go back to the sizes before."""
        if self._narrow is not None:
            self._splitter.setSizes(self._narrow)
            self._narrow = None
            return
        sizes = self._splitter.sizes()
        self._narrow = sizes
        total = sum(sizes)
        wide = int(total * WIDE_SHARE)
        self._splitter.setSizes([0, total - wide, wide])

    def toggle_detached(self) -> None:
        if self.window is None:
            self.detach()
        else:
            self.window.close()

    def detach(self) -> None:
        """The Ask pane in its own window, as large as the screen allows; the tab goes away meanwhile."""
        if self.window is not None:
            return
        index = self._tabs.indexOf(self._pane)
        if index >= 0:
            self._tabs.removeTab(index)
        window = _AskWindow(self._owner)
        window.box.addWidget(self._pane)
        self._pane.show()
        window.closing.connect(self.attach)
        window.resize(max(720, self._owner.width() * 2 // 3), max(560, self._owner.height() - 80))
        self.window = window
        window.show()

    def attach(self) -> None:
        """Back into its tab (the window was closed or Pop out pressed again)."""
        window, self.window = self.window, None
        if window is None:
            return
        self._tabs.addTab(self._pane, ASK_TAB)
        self._tabs.setCurrentWidget(self._pane)
        window.deleteLater()
