"""Shows exactly what one question sent to the language model: every message, read-only."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.answer_text import context_text


class ContextSentDialog(QDialog):
    """The system prompt and the user message with its numbered sources, as sent (secrets already masked).

    Args:
        messages: `AskResponse.context_sent`; empty when nothing left the app.
        sent_to: Who received them ("ollama · llama3.2"), or "" for the extractive answer.
        parent: Qt parent.
    """

    def __init__(self, messages: Sequence[dict[str, str]], sent_to: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Context sent")
        self.resize(720, 560)
        if messages:
            intro = f"These {len(messages)} messages were sent to {sent_to}, exactly as below."
        else:
            intro = (
                "Nothing was sent anywhere: this answer was built on this computer from your notes, "
                "without a language model."
            )
        self.intro = QLabel(intro, self)
        self.intro.setWordWrap(True)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Messages sent to the language model")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlainText(context_text(messages))
        self.text.setVisible(bool(messages))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
