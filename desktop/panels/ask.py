"""Ask tab placeholder: answering questions from notes comes in a later release."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from desktop.controller import AppController


class AskPanel(QWidget):
    """Says what is coming, so Ctrl+Enter has somewhere honest to go."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        label = QLabel(
            "<h3>Ask your notes — coming soon</h3>"
            "<p>Soon Ctrl+Enter will send your question, with the best matching passages, "
            "to the language model chosen in Settings › Language model, and show an answer "
            "that cites the notes it used.</p>"
            "<p>Nothing is sent anywhere yet.</p>",
            self,
        )
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        label.setAccessibleName("Ask: coming soon")
        layout = QVBoxLayout(self)
        layout.addWidget(label)
