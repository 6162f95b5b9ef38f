"""Ask tab: a conversation with the notes, answered with citations that show the cited passage.

The answer streams in as the model writes it; each `[n]` is a chip that shows
source n's passage beside the answer (the answer stays on screen) and readies it
in the Preview tab; the sources list explains, with the Why tab's score terms,
why each passage was chosen. A follow-up question is asked with the earlier
turns, rewritten to stand alone, and the rewritten form is shown. Nothing here
blocks: the question runs on `AskRunner`'s worker thread and every slot below
runs on the GUI thread.

This module lays the pane out and wires it to the runner and the conversation; the
widgets that show one answer are in `desktop.panels.answer_view`, and what the pane
says (status lines, who answered, the abstain message, the model label) is worded in
`desktop.answer_text`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.answer import AskRequest, AskResponse, Turn
from desktop.answer_text import (
    ABSTAIN_TITLE,
    abstain_text,
    answer_body,
    answered_by,
    closest_labels,
    conversation_markdown,
    model_label,
    source_line,
    status_text,
)
from desktop.controller import AppController, Scope
from desktop.dialogs.context_dialog import ContextSentDialog
from desktop.panels.answer_view import SCROLL_MIN_H, AnswerBrowser, PassageView, SourcesView, show_unverified
from desktop.panels.ask_room import (
    ask_splitter,
    reference_hit,
    request_scope,
    save_path_dialog,
    scope_header,
    scope_parts,
    squeezable,
)
from desktop.settings import Settings
from desktop.theme import colours

DETAILS = (("Brief answer", "brief"), ("Normal answer", "normal"), ("Detailed answer", "detailed"))
MAX_HISTORY = 6  # earlier turns sent along with a follow-up


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
        self.turns: list[AskResponse] = []  # the conversation so far, oldest first
        self.turn_scopes: list[str] = []  # the notes each turn was asked of ("all vaults", "work/projects")
        self.answer_scope = "all vaults"
        self._build_inputs()
        self._build_buttons()
        self._lay_out()
        self._runner.started.connect(self._on_started)
        self._runner.delta.connect(self._on_delta)
        self._runner.finished.connect(self._on_finished)
        self._runner.failed.connect(self._on_failed)
        self._runner.busyChanged.connect(self.stop_button.setEnabled)
        controller.scopeChanged.connect(self._show_scope)
        controller.settingsChanged.connect(self._show_model)
        self._show_scope(controller.scope)
        self._show_model(controller.settings)

    def _build_inputs(self) -> None:
        """The question line, Ask, the detail, scope and model labels; what shows the answer and its passage."""
        self.question = QLineEdit(self)
        self.question.setPlaceholderText("Ask a question about your notes…")
        self.question.setAccessibleName("Question")
        self.question.setClearButtonEnabled(True)
        self.question.returnPressed.connect(self.ask)
        self.ask_button = self._button("Ask", "Ask (Enter, or Ctrl+Enter from anywhere)", self.ask)
        self.detail = QComboBox(self)
        self.detail.setAccessibleName("How detailed the answer should be")
        for label, value in DETAILS:
            self.detail.addItem(label, value)
        self.detail.setCurrentIndex(1)
        self.scope_label = QLabel(self)
        self.scope_label.setAccessibleName("Notes the question is asked of")
        self.model_label = QLabel(self)
        self.model_label.setAccessibleName("Who writes the answer")
        squeezable(self.scope_label)  # a long scope clips (whole in the tooltip), never widening the pane
        self._apply_colours()
        self.status = QLabel("Answers come only from your notes, with the passages they cite.", self)
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Answer status")
        self.notes = QLabel(self)
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        self.notes.setAccessibleName("Warnings and errors")
        self.notes.setVisible(False)
        self.rewritten = QLabel(self)
        self.rewritten.setWordWrap(True)
        self.rewritten.setAccessibleName("The follow-up question as it was searched")
        self.rewritten.setVisible(False)
        self.browser = AnswerBrowser(self)
        self.browser.citationClicked.connect(self.open_citation)
        self.passage = PassageView(self)
        self.unverified_toggle = QToolButton(self)
        self.unverified_toggle.setText("Show the model's unverified answer")
        self.unverified_toggle.setCheckable(True)
        self.unverified_toggle.setVisible(False)
        self.unverified = QTextBrowser(self)
        self.unverified.setAccessibleName("The model's unverified answer")
        self.unverified.setVisible(False)
        self.unverified_toggle.toggled.connect(self.unverified.setVisible)
        self.history = QListWidget(self)
        self.history.setAccessibleName("Earlier questions of this conversation")
        self.history.setVisible(False)
        self.history.currentRowChanged.connect(self._show_turn)

    def _build_buttons(self) -> None:
        """New conversation, Save, Stop, Copy, Show context sent; sources."""
        self.new_button = self._button("New conversation", "Forget the earlier questions: the next question stands alone", self.new_conversation)
        self.save_button = self._button("Save…", "Save the conversation as a markdown file, where you choose", self.save, enabled=False)
        self.browser.linkClicked.connect(self.linkClicked)
        self.browser.closestClicked.connect(self._open_closest)
        self.sources = SourcesView(self)
        self.sources.previewRequested.connect(self.previewRequested)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setAccessibleName("Stop answering")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.copy_button = self._button("Copy", "Copy the conversation and its sources as markdown", self.copy, enabled=False)
        self.context_button = self._button("Show context sent", "The exact messages the language model received", self.show_context, enabled=False)

    def _button(self, text: str, tip: str, slot: Callable[[], object], *, enabled: bool = True) -> QPushButton:
        button = QPushButton(text, self)
        button.setToolTip(tip)
        button.setEnabled(enabled)
        button.clicked.connect(slot)
        return button

    def _lay_out(self) -> None:
        """The question and options rows, answer and passage side by side above the sources, the buttons."""
        self.browser.setMinimumHeight(SCROLL_MIN_H)
        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.ask_button)
        ask_row.addWidget(self.stop_button)
        options = QHBoxLayout()
        options.addWidget(self.detail)
        options.addWidget(self.scope_label, 1)
        options.addWidget(self.model_label)
        buttons = self.button_row = QHBoxLayout()  # the window adds Wider and Pop out (desktop.panels.ask_room)
        buttons.addWidget(self.new_button)
        buttons.addWidget(self.unverified_toggle)
        buttons.addStretch(1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.context_button)
        answer = QWidget(self)
        answer_layout = QVBoxLayout(answer)
        answer_layout.setContentsMargins(0, 0, 0, 0)
        answer_layout.addWidget(self.browser, 3)
        answer_layout.addWidget(self.unverified, 1)
        # The passage opens beside the answer, so reading a source never hides what it supports.
        self.beside = QSplitter(Qt.Orientation.Horizontal, self)
        self.beside.addWidget(answer)
        self.beside.addWidget(self.passage)
        self.beside.setStretchFactor(0, 3)
        self.beside.setStretchFactor(1, 2)
        self.splitter = ask_splitter(self, self.history, self.beside, self.sources)  # the answer gets most of the height
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(ask_row)
        layout.addLayout(options)
        layout.addWidget(self.status)
        layout.addWidget(self.rewritten)
        layout.addWidget(self.notes)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(buttons)


    # -- actions ---------------------------------------------------------------------------

    def focus_question(self) -> None:
        self.question.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.question.selectAll()

    def ask(self, question: str | None = None) -> AskRequest | None:
        """Ask the question in the box (or `question`, which is put in the box); a running one is cancelled."""
        if isinstance(question, str):
            self.question.setText(question)
        vaults, folders, prefixes = scope_parts(self._controller.scope)
        history = tuple(
            Turn(t.question, t.standalone_question or t.question, answer_body(t.answer)) for t in self.turns[-MAX_HISTORY:] if not t.error
        )
        detail = str(self.detail.currentData())
        return self._runner.ask(self.question.text(), detail=detail, vaults=vaults, folders=folders, path_prefixes=prefixes, history=history)

    def new_conversation(self) -> None:
        """Forget the earlier turns: the next question is asked on its own."""
        if self._runner.is_busy():
            self.stop()
        self.turns.clear()
        self.turn_scopes.clear()
        self.response = None
        self.history.clear()
        self.history.setVisible(False)
        self._clear_answer_view()
        self.status.setText("New conversation: answers come only from your notes, with the passages they cite.")
        self.focus_question()

    def save(self) -> Path | None:
        """Save the conversation as markdown to a file the user picks (Documents by default, never a vault)."""
        if not self.turns:
            return None
        target = self.choose_save_path()
        if target is None:
            return None
        try:
            target.write_text(conversation_markdown(self.turns), encoding="utf-8")
        except OSError as exc:
            self._set_notes([("error", f"✗ Could not save {target}: {exc.strerror or exc}")])
            return None
        self._controller.message.emit(f"Conversation saved to {target}")
        return target

    def choose_save_path(self) -> Path | None:
        """Ask where to save; tests replace this method."""
        return save_path_dialog(self, self.turns[0].question if self.turns else "conversation")

    def stop(self) -> None:
        if self._runner.is_busy():
            self._stopped = True
            self.status.setText("Stopping…")
            self._runner.stop()

    def copy(self) -> None:
        if self.turns:
            self._controller.actions.copy_text(conversation_markdown(self.turns))
            self._controller.message.emit("Conversation and sources copied as markdown")

    def show_context(self) -> None:
        if self.response is None:
            return
        dialog = ContextSentDialog(self.response.context_sent, answered_by(self.response), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(self._forget_dialog)
        self.context_dialog = dialog
        dialog.show()

    def open_citation(self, number: int) -> None:
        """A `[n]` chip was clicked: show source n's passage beside the answer, explain it, ready it in Preview."""
        source = self.sources.source(number)
        if source is None:
            return
        self.passage.show_passage(source, self.response.quotes if self.response is not None else ())
        self.sources.open(number, switch=False)

    # -- the runner's signals (GUI thread) -----------------------------------------------------

    def _clear_answer_view(self) -> None:
        """Empty everything that shows one answer (a new question, or a new conversation)."""
        self.browser.clear_answer()
        self.passage.show_hint()
        self.sources.set_sources(())
        self._set_notes([])
        show_unverified(self.unverified_toggle, self.unverified, "")
        self.rewritten.setVisible(False)
        self.copy_button.setEnabled(False)
        self.save_button.setEnabled(False)
        self.context_button.setEnabled(False)

    def _on_started(self, request: AskRequest) -> None:
        self.request = request
        self.response = None
        self.answer_scope = request_scope(request)  # what the header says once this answer shows
        self.error = None
        self._stopped = False
        self._clear_answer_view()
        self.status.setText(f"Searching {html.escape(self.answer_scope)} for passages…")

    def _on_delta(self, delta: str) -> None:
        if not self.browser.answer_text:
            self.status.setText("Writing the answer…")
        self.browser.append_delta(delta)

    def _on_finished(self, response: AskResponse) -> None:
        self.turns.append(response)
        self.turn_scopes.append(request_scope(self.request))
        item_text = response.question + (f"  →  {response.standalone_question}" if response.standalone_question else "")
        self.history.blockSignals(True)
        self.history.addItem(item_text)
        self.history.setCurrentRow(self.history.count() - 1)
        self.history.blockSignals(False)
        self.history.setVisible(len(self.turns) > 1)
        self.save_button.setEnabled(True)
        self._show_turn_response(response)

    def _show_turn(self, row: int) -> None:
        """An earlier question was picked in the conversation list: show its answer again."""
        if 0 <= row < len(self.turns):
            self._show_turn_response(self.turns[row])

    def _show_turn_response(self, response: AskResponse) -> None:
        self.response = response
        self.answer_scope = self.turn_scopes[self.turns.index(response)] if response in self.turns else self.answer_scope
        self._show_scope(self._controller.scope)
        self.copy_button.setEnabled(True)
        self.context_button.setEnabled(True)
        self.passage.show_hint()
        self.sources.set_sources(() if response.abstained else response.sources, str(response.debug.get("search_mode", "hybrid")))
        self.rewritten.setText(f"Follow-up searched as: <i>{html.escape(response.standalone_question)}</i>")
        self.rewritten.setVisible(bool(response.standalone_question))
        show_unverified(self.unverified_toggle, self.unverified, response.unverified)
        notes: list[tuple[str, str]] = []
        if response.abstained:
            self.browser.set_message(ABSTAIN_TITLE, abstain_text(response, self.answer_scope), closest_labels(response))
            self.status.setText(f"<b>{ABSTAIN_TITLE}.</b>")
        else:
            self.browser.set_answer(response.answer, {s.number: source_line(s) for s in response.sources})
            self.status.setText(status_text(response, stopped=self._stopped))
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
        self.scope_label.setText(header := scope_header(scope.label() if scope else "all vaults", self.answer_scope if self.response else None))
        self.scope_label.setToolTip(f"{header}\n\nSelect a vault or folder in the tree on the left to ask only its notes")

    def _show_model(self, settings: Settings) -> None:
        text, tip = model_label(settings)
        self.model_label.setText(text)
        self.model_label.setToolTip(tip)

    def _open_closest(self, i: int) -> None:
        if self.response is not None and i < len(self.response.related):  # a closest note of an abstention
            self.previewRequested.emit(reference_hit(self.response.related[i]), True)

    def _forget_dialog(self) -> None:
        self.context_dialog = None

