"""Ask tab: a question about the notes, answered with citations that open the cited passage.

The answer streams in as the model writes it; each `[n]` is a chip that opens
source n in the Preview tab, and the sources list explains, with the Why tab's
score terms, why each passage was chosen. Nothing here blocks: the question
runs on `AskRunner`'s worker thread and every slot below runs on the GUI thread.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.answer import AskRequest, AskResponse
from core.providers.llm import default_llm_registry
from desktop.answer_text import answer_markdown, is_extractive, source_line
from desktop.controller import AppController, Scope
from desktop.dialogs.context_dialog import ContextSentDialog
from desktop.panels.answer_view import SCROLL_MIN_H, AnswerBrowser, SourcesView
from desktop.settings import Settings
from desktop.theme import colours

DETAILS = (("Brief answer", "brief"), ("Normal answer", "normal"), ("Detailed answer", "detailed"))
ABSTAIN_TITLE = "Nothing in your notes answers this"


class AskPanel(QWidget):
    """Question, answer, sources; Stop, Copy and Show context sent.

    Signals:
        previewRequested: (Hit, switch): show this passage in the Preview tab, switching to it when `switch`.
        linkClicked: A link in the answer other than a citation (a note, a web address).
    """

    previewRequested = Signal(object, bool)
    linkClicked = Signal(QUrl)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._runner = controller.asks
        self.request: AskRequest | None = None
        self.response: AskResponse | None = None
        self.error: str | None = None
        self._stopped = False
        self.context_dialog: ContextSentDialog | None = None

        self.question = QLineEdit(self)
        self.question.setPlaceholderText("Ask a question about your notes…")
        self.question.setAccessibleName("Question")
        self.question.setClearButtonEnabled(True)
        self.question.returnPressed.connect(self.ask)
        self.ask_button = QPushButton("Ask", self)
        self.ask_button.setToolTip("Ask (Enter, or Ctrl+Enter from anywhere)")
        self.ask_button.clicked.connect(self.ask)
        self.detail = QComboBox(self)
        self.detail.setAccessibleName("How detailed the answer should be")
        for label, value in DETAILS:
            self.detail.addItem(label, value)
        self.detail.setCurrentIndex(1)
        self.scope_label = QLabel(self)
        self.scope_label.setAccessibleName("Notes the question is asked of")
        self.model_label = QLabel(self)
        self.model_label.setAccessibleName("Who writes the answer")
        self._apply_colours()
        self.status = QLabel("Answers come only from your notes, with the passages they cite.", self)
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Answer status")
        self.notes = QLabel(self)
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        self.notes.setAccessibleName("Warnings and errors")
        self.notes.setVisible(False)
        self.browser = AnswerBrowser(self)
        self.browser.citationClicked.connect(self.open_citation)
        self.browser.linkClicked.connect(self.linkClicked)
        self.sources = SourcesView(self)
        self.sources.previewRequested.connect(self.previewRequested)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setAccessibleName("Stop answering")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setToolTip("Copy the answer and its sources as markdown")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy)
        self.context_button = QPushButton("Show context sent", self)
        self.context_button.setToolTip("The exact messages the language model received")
        self.context_button.setEnabled(False)
        self.context_button.clicked.connect(self.show_context)

        self.browser.setMinimumHeight(SCROLL_MIN_H)
        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.ask_button)
        ask_row.addWidget(self.stop_button)
        options = QHBoxLayout()
        options.addWidget(self.detail)
        options.addWidget(self.scope_label, 1)
        options.addWidget(self.model_label)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.context_button)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.browser)
        self.splitter.addWidget(self.sources)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(ask_row)
        layout.addLayout(options)
        layout.addWidget(self.status)
        layout.addWidget(self.notes)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(buttons)

        self._runner.started.connect(self._on_started)
        self._runner.delta.connect(self._on_delta)
        self._runner.finished.connect(self._on_finished)
        self._runner.failed.connect(self._on_failed)
        self._runner.busyChanged.connect(self.stop_button.setEnabled)
        controller.scopeChanged.connect(self._show_scope)
        controller.settingsChanged.connect(self._show_model)
        self._show_scope(controller.scope)
        self._show_model(controller.settings)

    # -- actions ---------------------------------------------------------------------------

    def focus_question(self) -> None:
        self.question.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.question.selectAll()

    def ask(self, question: str | None = None) -> AskRequest | None:
        """Ask the question in the box (or `question`, which is put in the box); a running one is cancelled."""
        if isinstance(question, str):
            self.question.setText(question)
        scope = self._controller.scope
        vaults = (scope.vault,) if scope else ()
        folders = (scope.folder,) if scope and scope.folder else ()
        return self._runner.ask(self.question.text(), detail=str(self.detail.currentData()), vaults=vaults, folders=folders)

    def stop(self) -> None:
        if self._runner.is_busy():
            self._stopped = True
            self.status.setText("Stopping…")
            self._runner.stop()

    def copy(self) -> None:
        if self.response is not None:
            self._controller.actions.copy_text(answer_markdown(self.response))
            self._controller.message.emit("Answer and sources copied as markdown")

    def show_context(self) -> None:
        if self.response is None:
            return
        dialog = ContextSentDialog(self.response.context_sent, _answered_by(self.response), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(self._forget_dialog)
        self.context_dialog = dialog
        dialog.show()

    def open_citation(self, number: int) -> None:
        """A `[n]` chip was clicked: explain source n and open it in the Preview tab."""
        self.sources.open(number, switch=True)

    # -- the runner's signals (GUI thread) -----------------------------------------------------

    def _on_started(self, request: AskRequest) -> None:
        self.request = request
        self.response = None
        self.error = None
        self._stopped = False
        self.browser.clear_answer()
        self.sources.set_sources(())
        self._set_notes([])
        self.copy_button.setEnabled(False)
        self.context_button.setEnabled(False)
        self.status.setText(f"Searching {html.escape(self.scope_label.text().removeprefix('In: '))} for passages…")

    def _on_delta(self, delta: str) -> None:
        if not self.browser.answer_text:
            self.status.setText("Writing the answer…")
        self.browser.append_delta(delta)

    def _on_finished(self, response: AskResponse) -> None:
        self.response = response
        self.copy_button.setEnabled(True)
        self.context_button.setEnabled(True)
        self.sources.set_sources(response.sources, str(response.debug.get("search_mode", "hybrid")))
        notes: list[tuple[str, str]] = []
        if response.abstained:
            where = self.scope_label.text().removeprefix("In: ")
            self.browser.set_message(
                ABSTAIN_TITLE,
                f"No passage in {where} is close enough to the question to answer it. "
                "Try other words, a wider scope, or a plain search.",
            )
            self.status.setText(f"<b>{ABSTAIN_TITLE}.</b>")
        else:
            self.browser.set_answer(response.answer, {s.number: source_line(s) for s in response.sources})
            self.status.setText(self._status_text(response))
        if response.error and not self._stopped:
            notes.append(("error", f"✗ {response.error}"))
        notes.extend(("warn", f"⚠ {w}") for w in response.warnings)
        self._set_notes(notes)

    def _on_failed(self, message: str) -> None:
        self.error = message
        self.browser.set_answer(self.browser.answer_text)
        self.status.setText("<b>No answer.</b>")
        notes = [("error", f"✗ {message}")]
        if self._controller.settings.llm_provider != "none":
            notes.append(("dim", "Check the provider, model and address in Settings › Language model, or choose “None” for offline extractive answers."))
        self._set_notes(notes)

    # -- display ---------------------------------------------------------------------------

    def _status_text(self, response: AskResponse) -> str:
        if self._stopped:
            return "<b>Stopped</b> — the answer below is incomplete."
        if response.incomplete:
            return "<b>The answer broke off</b> — what arrived is below, incomplete."
        if is_extractive(response):
            return (
                "<b>Extractive answer</b> — no language model is configured, so these are the most relevant lines "
                "of your notes, quoted as written. Choose a model in Settings › Language model for written answers."
            )
        if response.error:
            return "<b>The model did not answer.</b>"
        first = f", first words after {response.first_token_ms / 1000:.1f} s" if response.first_token_ms else ""
        return f"Answered by {html.escape(_answered_by(response))}{first}."

    def _apply_colours(self) -> None:
        self.model_label.setStyleSheet(f"color:{colours(self.palette()).dim}")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "model_label"):  # the system switched light/dark
            self._apply_colours()
        super().changeEvent(event)

    def _set_notes(self, notes: list[tuple[str, str]]) -> None:
        """Lines of (kind, text); kind is a `Colours` field: error, warn or dim."""
        theme = colours(self.palette())
        self.notes.setText("<br>".join(f"<span style='color:{getattr(theme, kind)}'>{html.escape(t)}</span>" for kind, t in notes))
        self.notes.setVisible(bool(notes))

    def _show_scope(self, scope: Scope | None) -> None:
        self.scope_label.setText(f"In: {scope.label()}" if scope else "In: all vaults")
        self.scope_label.setToolTip("Select a vault or folder in the tree on the left to ask only its notes")

    def _show_model(self, settings: Settings) -> None:
        info = default_llm_registry().get(settings.llm_provider)
        if info is None:
            self.model_label.setText("Answers: extractive (offline)")
            self.model_label.setToolTip("No language model is configured: answers quote your notes. Settings › Language model")
            return
        allowed = "" if settings.allow_remote_llm or not info.remote else " (not allowed yet)"
        self.model_label.setText(f"Answers: {info.id} · {settings.llm_model or info.default_model}{allowed}")
        self.model_label.setToolTip(f"Passages are sent to {settings.llm_base_url or info.default_base_url}")

    def _forget_dialog(self) -> None:
        self.context_dialog = None


def _answered_by(response: AskResponse) -> str:
    if is_extractive(response):
        return ""
    return f"{response.provider} · {response.model}" if response.model else response.provider
