"""First-run view: no vault yet, so offer to open a folder or try the bundled sample."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.controller import AppController
from desktop.theme import colours


class WelcomePanel(QWidget):
    """Shown instead of the search view while no vault is configured.

    Signals:
        openFolderRequested: "Open a folder…" was pressed (the window shows the picker).
        sampleRequested: "Try the sample vault" was pressed.
    """

    openFolderRequested = Signal()
    sampleRequested = Signal()

    def __init__(self, controller: AppController, parent: QWidget | None = None, *, sample_available: bool = True) -> None:
        super().__init__(parent)
        self._controller = controller
        title = QLabel("<h1>Cairn</h1>", self)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        blurb = QLabel(
            "Search your own markdown notes by words and by meaning — offline.<br>"
            "Cairn reads your notes but never changes them; its index lives in its own folder.",
            self,
        )
        blurb.setAlignment(Qt.AlignmentFlag.AlignCenter)
        blurb.setWordWrap(True)
        self.open_button = QPushButton("Open a folder…", self)
        self.open_button.setAccessibleName("Open a folder of notes")
        self.open_button.setDefault(True)
        self.open_button.setMinimumWidth(180)
        self.open_button.clicked.connect(self.openFolderRequested)
        self.sample_button = QPushButton("Try the sample vault", self)
        self.sample_button.setAccessibleName("Try the sample vault")
        self.sample_button.setMinimumWidth(180)
        self.sample_button.setEnabled(sample_available)
        if not sample_available:
            self.sample_button.setToolTip("The sample vault is not installed with this copy of Cairn")
        self.sample_button.clicked.connect(self.sampleRequested)
        hint = self.hint = QLabel("Tip: an Obsidian vault works as it is — pick its folder, or drop it on this window.", self)
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._apply_colours()
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.sample_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        layout.addWidget(title)
        layout.addWidget(blurb)
        layout.addSpacing(16)
        layout.addLayout(buttons)
        layout.addSpacing(8)
        layout.addWidget(hint)
        layout.addStretch(3)

    def _apply_colours(self) -> None:
        self.hint.setStyleSheet(f"color: {colours(self.palette()).dim}")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "hint"):  # the system switched light/dark
            self._apply_colours()
        super().changeEvent(event)
