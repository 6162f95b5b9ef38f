"""The Ask pane's wording, checked without widgets: status line, abstain message, model label."""

from __future__ import annotations

from dataclasses import replace

from core.answer import AskResponse
from core.answer.models import Reference
from core.answer.pipeline import EXTRACTIVE
from desktop.answer_text import abstain_text, answered_by, closest_labels, model_label, status_text
from desktop.settings import Settings

WRITTEN = AskResponse(
    question="How do I make stock?",
    answer="Simmer the bones [1].",
    references=(),
    abstained=False,
    abstain_reason=None,
    context_sent=(),
    provider="ollama",
    model="llama3.2",
    first_token_ms=1234.0,
)


def test_status_names_the_model_and_its_first_words_time() -> None:
    assert status_text(WRITTEN, stopped=False) == "Answered by ollama · llama3.2, first words after 1.2 s."


def test_status_says_stopped_before_anything_else_about_the_answer() -> None:
    broken = replace(WRITTEN, incomplete=True, error="connection reset")
    assert status_text(broken, stopped=True).startswith("<b>Stopped</b>")
    assert status_text(broken, stopped=False).startswith("<b>The answer broke off</b>")


def test_an_extractive_answer_is_said_so_and_has_no_author() -> None:
    extractive = replace(WRITTEN, provider=EXTRACTIVE, model=None)
    assert answered_by(extractive) == ""
    assert status_text(extractive, stopped=False).startswith("<b>Extractive answer</b>")


def test_status_escapes_the_provider_name() -> None:
    assert "&lt;b&gt;" in status_text(replace(WRITTEN, provider="<b>", model=None), stopped=False)


def test_abstain_lists_the_closest_notes_or_says_what_to_try() -> None:
    related = Reference(1, "notes", "cooking/stock.md", "", 0, 0, 10, title="Stock")
    abstained = replace(WRITTEN, abstained=True, related=(related,))
    assert abstain_text(abstained, "notes") == (
        "No passage in notes answers the question. The closest notes, which may be related (click one to open it):"
    )
    assert closest_labels(abstained) == ["Stock (cooking/stock.md)"]  # shown as links under the sentence
    assert abstain_text(replace(WRITTEN, abstained=True), "all vaults").endswith("Try other words, a wider scope, or a plain search.")


def test_model_label_says_offline_without_a_model_and_warns_before_consent() -> None:
    assert model_label(Settings())[0] == "Answers: extractive (offline)"
    text, tip = model_label(Settings(llm_provider="openai", llm_model="gpt-x", route_folders=True))
    assert text == "Answers: openai · gpt-x (not allowed yet) · folders routed"
    assert tip.startswith("Passages are sent to https://api.openai.com") and "picks the folders" in tip
    assert "not allowed" not in model_label(Settings(llm_provider="openai", allow_remote_llm=True))[0]
