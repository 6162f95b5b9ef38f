"""The Ask tab on the sample vault, keyword only: extractive answers, citations, scripted streaming models."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from core.providers.llm import ChatMessage, LLMError
from core.vault.links import labelled_text  # noqa: E402
from desktop.controller import AppController, Scope
from desktop.main_window import MainWindow
from desktop.panels.ask import ABSTAIN_TITLE, AskPanel
from tests.desktop.helpers import Recorder, index_vault

RELEASE_QUESTION = "Who owns the release checklist?"
RELEASE_NOTE = "Projects/Cairn/Release checklist.md"
STREAMED = ["Priya ", "Natarajan ", "owns ", "the ", "release ", "checklist ", "[1]. "] + [f"word{i} " for i in range(40)]


class ScriptedProvider:
    """A chat model that streams fixed pieces with a pause between them, honouring the cancel event."""

    id = "scripted"
    model = "scripted-1"
    remote = True

    def __init__(self, pieces: Sequence[str] = ("Priya owns it [1].",), delay: float = 0.0, error: LLMError | None = None) -> None:
        self.pieces = list(pieces)
        self.delay = delay
        self.error = error
        self.messages: list[ChatMessage] = []
        self.calls = 0

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.2,
        max_tokens: int | None = None,
        cancel: threading.Event | None = None,
    ) -> Iterator[str]:
        self.calls += 1
        self.messages = list(messages)
        if self.error is not None:
            raise self.error
        for piece in self.pieces:
            if cancel is not None and cancel.is_set():
                raise LLMError("cancelled", "Stopped before the answer was complete")
            time.sleep(self.delay)
            yield piece


@pytest.fixture
def build(qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path) -> Callable[..., MainWindow]:
    """A window on the indexed sample vault; `provider` (if given) answers every question."""

    def make(provider: ScriptedProvider | None = None) -> MainWindow:
        options = {} if provider is None else {"chat_provider_factory": lambda settings: provider}
        controller = make_controller(**options)
        window = make_window(controller)
        index_vault(qtbot, controller, sample_vault)
        window.tabs.setCurrentWidget(window.ask)
        return window

    return make


def ask_and_wait(qtbot: Any, panel: AskPanel, question: str, timeout_ms: int = 8000) -> None:
    panel.question.setText(question)
    qtbot.mouseClick(panel.ask_button, Qt.MouseButton.LeftButton)
    done = lambda: panel.response is not None or panel.error is not None  # noqa: E731
    qtbot.waitUntil(lambda: panel.request is not None and panel.request.question == question and done(), timeout=timeout_ms)


def click_citation(qtbot: Any, panel: AskPanel, marker: str) -> None:
    """Click in the middle of a `[n]` chip, as a user would."""
    found = panel.browser.document().find(marker)
    assert not found.isNull(), panel.browser.toPlainText()
    cursor = QTextCursor(panel.browser.document())
    cursor.setPosition(found.selectionStart() + 1)
    panel.browser.ensureCursorVisible()
    point = panel.browser.cursorRect(cursor).center()
    qtbot.mouseClick(panel.browser.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_extractive_answer_cites_the_release_checklist_and_its_chip_opens_the_preview(qtbot: Any, build: Callable[..., MainWindow], recorder: Recorder) -> None:
    window = build()
    panel = window.ask
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    response = panel.response
    assert response is not None and response.provider == "extractive" and not response.abstained
    text = panel.browser.toPlainText()
    assert "[" in text and "Priya Natarajan" in text
    assert "Extractive answer" in panel.status.text()
    assert "Extractive answer (no language model" not in text  # the label is shown once, above the answer
    lines = panel.sources.lines()
    assert lines[0].startswith("[1] Release checklist") and lines[0].endswith(RELEASE_NOTE)
    assert not panel.stop_button.isEnabled()

    cited = response.references[0]
    click_citation(qtbot, panel, f"[{cited.number}]")
    qtbot.waitUntil(lambda: panel.passage.number == cited.number)
    # The answer stays on screen: the passage opens beside it, the Preview is readied without switching.
    assert window.tabs.currentWidget() is window.ask and "Priya Natarajan" in panel.browser.toPlainText()
    quoted = next(q for q in response.quotes if q.number == cited.number)
    # The passage is shown as read (labels, not link or emphasis syntax): compare its words.
    shown = " ".join(panel.passage.toPlainText().split())
    said = " ".join(labelled_text(quoted.text.split("|")[0]).replace("**", "").strip().strip("[]").split())
    assert said in shown
    assert cited.rel_path in panel.passage.toPlainText()
    assert cited.rel_path in window.preview.header.text() and window.preview.chunk_range is not None
    source = next(s for s in response.sources if s.number == cited.number)
    assert source.title in panel.sources.why_title.text()
    values = panel.sources.terms.term_values()
    expected = [row for hit in source.hits for row in [(t.name, t.value) for t in hit.contributions] + [("= score", hit.score)]]
    assert values == expected  # every merged chunk's terms, as the Why tab lists them

    panel.copy_button.click()
    assert recorder.clipboard and recorder.clipboard[-1].startswith(f"**Q:** {RELEASE_QUESTION}")
    assert f"1. Release checklist — `{source.vault}/{RELEASE_NOTE}`" in recorder.clipboard[-1]
    assert "Priya Natarajan" in recorder.clipboard[-1]


def test_an_unrelated_question_says_nothing_in_the_notes_answers_it(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    panel = build().ask
    ask_and_wait(qtbot, panel, "What is the capital of Mongolia?")
    assert panel.response is not None and panel.response.abstained
    assert ABSTAIN_TITLE in panel.browser.toPlainText()
    assert ABSTAIN_TITLE in panel.status.text()
    assert panel.sources.lines() == []


def test_the_tree_selection_scopes_the_question(qtbot: Any, build: Callable[..., MainWindow], sample_vault: Path) -> None:
    window = build()
    window.tree.select(sample_vault.name, "Recipes")
    assert window.ask.scope_label.text() == f"In: {sample_vault.name}/Recipes"
    ask_and_wait(qtbot, window.ask, RELEASE_QUESTION)
    assert window.ask.request.folders == ("Recipes",) and window.ask.request.vaults == (sample_vault.name,)
    assert window.ask.response.abstained  # the release checklist is not a recipe


def test_a_model_streams_its_answer_and_stop_keeps_the_partial_text(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    provider = ScriptedProvider(STREAMED, delay=0.05)
    panel = build(provider).ask
    panel.question.setText(RELEASE_QUESTION)
    panel.ask_button.click()
    lengths: list[int] = []

    def grown_twice() -> bool:
        n = len(panel.browser.toPlainText())
        if n and (not lengths or n > lengths[-1]):
            lengths.append(n)
        return len(lengths) >= 3 and "[1]" in panel.browser.toPlainText()

    qtbot.waitUntil(grown_twice, timeout=5000)  # the text grew piece by piece, as streamed
    assert panel.response is None and panel.stop_button.isEnabled()
    qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.response is not None, timeout=5000)
    response = panel.response
    assert response.incomplete and response.provider == "scripted"
    kept = panel.browser.toPlainText()
    assert kept.startswith("Priya Natarajan owns the release checklist [1].")
    assert len(kept) < len("".join(STREAMED).strip())
    assert "Stopped" in panel.status.text()
    assert "✗" not in panel.notes.text()  # stopping is not an error
    assert not panel.stop_button.isEnabled() and panel.ask_button.isEnabled()


def test_a_new_question_cancels_the_running_one(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    provider = ScriptedProvider(STREAMED, delay=0.05)
    panel = build(provider).ask
    panel.question.setText(RELEASE_QUESTION)
    panel.ask_button.click()
    qtbot.waitUntil(lambda: bool(panel.browser.toPlainText()), timeout=5000)
    provider.pieces = ["Priya signs off every release [1]."]
    provider.delay = 0.0
    ask_and_wait(qtbot, panel, "Who signs off every release?")
    assert panel.response.answer == "Priya signs off every release [1]."
    qtbot.wait(300)  # the first worker's late pieces must not reach the pane
    assert panel.browser.toPlainText().strip() == "Priya signs off every release [1]."


def test_a_connection_error_is_shown_in_the_pane(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    provider = ScriptedProvider(error=LLMError("connection_refused", "Could not connect to http://127.0.0.1:9"))
    panel = build(provider).ask
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    assert panel.notes.isVisible()
    assert "Could not connect to http://127.0.0.1:9" in panel.notes.text()
    assert panel.ask_button.isEnabled() and not panel.stop_button.isEnabled()


def test_a_provider_that_cannot_be_set_up_is_explained(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    window = build()
    controller = window.controller
    controller.settings = replace(controller.settings, llm_provider="ollama", allow_remote_llm=False)
    ask_and_wait(qtbot, window.ask, RELEASE_QUESTION)
    assert window.ask.response is None
    assert "not allowed yet" in window.ask.notes.text()
    controller.settings = replace(controller.settings, allow_remote_llm=True, llm_base_url="ftp://nowhere")
    ask_and_wait(qtbot, window.ask, "Who signs off every release?")
    assert "ftp://nowhere" in window.ask.notes.text()


def test_show_context_sent_lists_the_exact_messages(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    provider = ScriptedProvider()
    panel = build(provider).ask
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    assert "Answered by scripted · scripted-1" in panel.status.text()
    panel.context_button.click()
    dialog = panel.context_dialog
    assert dialog is not None and dialog.isVisible() and dialog.text.isReadOnly()
    shown = dialog.text.toPlainText()
    assert f"Question: {RELEASE_QUESTION}" in shown
    assert all(m.content in shown for m in provider.messages)
    dialog.close()


def test_ctrl_enter_in_the_query_box_asks_the_query(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    window = build()
    window.tabs.setCurrentWidget(window.preview)
    window.search_bar.query.setFocus()
    window.search_bar.query.setText(RELEASE_QUESTION)
    qtbot.keyClick(window.search_bar.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.ask
    qtbot.waitUntil(lambda: window.ask.response is not None, timeout=8000)
    assert window.ask.question.text() == RELEASE_QUESTION
    assert window.ask.response.references and "Priya Natarajan" in window.ask.response.answer


def test_grouped_markers_become_one_chip_per_source_and_the_extractive_label_is_lifted() -> None:
    from core.answer.extractive import LABEL
    from desktop.answer_text import answer_body, split_markers

    assert split_markers("Both say so [1, 3] and [2;4].") == "Both say so [1][3] and [2][4]."
    assert split_markers("Only [2].") == "Only [2]."
    assert answer_body(f"{LABEL}\n- A line. [1]") == "- A line. [1]"
    assert answer_body("A model's answer [1].") == "A model's answer [1]."


def test_a_follow_up_is_rewritten_shown_and_the_conversation_saved_where_the_user_picks(
    qtbot: Any, build: Callable[..., MainWindow], tmp_path: Path, sample_vault: Path
) -> None:
    panel = build().ask
    ask_and_wait(qtbot, panel, "How long is the bench rest when shaping the sourdough?")
    ask_and_wait(qtbot, panel, "and how long in the fridge?")
    follow = panel.response
    assert follow is not None and "sourdough" in follow.standalone_question
    assert panel.rewritten.isVisible() or not panel.isVisible()
    assert "sourdough" in panel.rewritten.text() and panel.history.count() == 2
    target = tmp_path / "chosen" / "talk.md"
    target.parent.mkdir()
    panel.choose_save_path = lambda: target  # type: ignore[method-assign]
    assert panel.save() == target
    saved = target.read_text("utf-8")
    assert "**Q:** How long is the bench rest" in saved and "**Q:** and how long in the fridge?" in saved
    assert "Searched for:" in saved and not list(sample_vault.rglob("talk.md"))  # only where the user picked
    panel.history.setCurrentRow(0)
    assert panel.response is panel.turns[0]
    panel.new_conversation()
    assert panel.turns == [] and panel.history.count() == 0
    ask_and_wait(qtbot, panel, "and how long in the fridge?")
    assert panel.response is not None and panel.response.standalone_question == ""  # nothing to lean on any more


def test_a_model_answer_citing_nothing_is_folded_away_as_unverified(qtbot: Any, build: Callable[..., MainWindow]) -> None:
    panel = build(ScriptedProvider(["Jonah Kim owns it, trust me."])).ask
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    response = panel.response
    assert response is not None and response.unverified == "Jonah Kim owns it, trust me."
    assert "Priya Natarajan" in panel.browser.toPlainText() and "trust me" not in panel.browser.toPlainText()
    assert not panel.unverified_toggle.isHidden() and panel.unverified.isHidden()
    panel.unverified_toggle.click()
    assert not panel.unverified.isHidden() and "trust me" in panel.unverified.toPlainText()
    assert "unverified" in panel.status.text()


def test_a_dotted_name_node_scopes_the_question_as_it_scopes_search(qtbot: Any, build: Callable[..., MainWindow], sample_vault: Path) -> None:
    window = build()
    panel = window.ask
    window.controller.set_scope(Scope(sample_vault.name, prefix="Recipes/"))  # a node matching by path prefix
    assert panel.scope_label.text() == f"In: {sample_vault.name}/Recipes/*"
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    assert panel.request is not None and panel.request.path_prefixes == ("Recipes/",)
    assert panel.response is not None and panel.response.abstained  # the release checklist lies outside the node
    assert all(r.rel_path.startswith("Recipes/") for r in panel.response.related)
    assert panel.scope_label.text() == f"In: {sample_vault.name}/Recipes/*"  # the answer's header: the scope it was given for
    window.controller.set_scope(Scope(sample_vault.name, prefix="Projects/Cairn/Release"))
    ask_and_wait(qtbot, panel, RELEASE_QUESTION)
    assert panel.response is not None and not panel.response.abstained
    assert {r.rel_path for r in panel.response.references} == {RELEASE_NOTE}
    assert panel.scope_label.text() == f"In: {sample_vault.name}/Projects/Cairn/Release*"
