"""Follow-up questions: "and on macOS?" rewritten into a question that can be searched on its own.

Each turn of a conversation retrieves afresh, so a follow-up must carry its
topic with it. With a language model the model rewrites it; offline (or when the
model fails or rambles) the previous question's key words are carried over. The
rewritten question is shown to the user, so a wrong guess is visible.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from core.answer.context import QUESTION_WORDS, question_stems, stems
from core.answer.models import Turn

MAX_REWRITE_CHARS = 300
# A question that leans on the one before: it opens with a connective or points back with a pronoun.
_LEANS = re.compile(
    r"(?i)^\s*(and|or|but|also|what about|how about|same|then|so|why not)\b|\b(it|its|it's|that|this|those|these|them|there|one|ones|instead)\b"
)
REWRITE_PROMPT = (
    "Rewrite the user's last question so that it can be understood without the conversation, "
    "keeping its meaning and language. Reply with the rewritten question only."
)


def is_follow_up(question: str, history: Sequence[Turn]) -> bool:
    """Short or pointing back: a question that cannot stand alone (only when there is a history)."""
    if not history:
        return False
    return bool(_LEANS.search(question)) or len(question_stems(question)) <= 2


def carry_over(question: str, history: Sequence[Turn]) -> str:
    """The previous question's key words that this one lacks, put in front of it."""
    previous = history[-1].standalone or history[-1].question
    have = stems(question)
    carried: list[str] = []
    for word in re.findall(r"[\w.+#-]+", previous):
        if word.lower() in QUESTION_WORDS or not stems(word) or stems(word) <= have:
            continue
        if word not in carried:
            carried.append(word)
    return f"{' '.join(carried)} — {question.strip()}" if carried else question.strip()


def rewrite(question: str, history: Sequence[Turn], provider: Any | None = None, cancel: threading.Event | None = None) -> str:
    """The standalone form of `question`; the question itself when it needs no rewriting."""
    if not is_follow_up(question, history):
        return question.strip()
    if provider is not None:
        written = _by_model(question, history, provider, cancel)
        if written:
            return written
    return carry_over(question, history)


def _by_model(question: str, history: Sequence[Turn], provider: Any, cancel: threading.Event | None) -> str | None:
    from core.providers.llm import ChatMessage, LLMError

    lines = [f"Q: {t.question}\nA: {t.answer[:400]}" for t in history[-3:]]
    user = "Conversation so far:\n" + "\n\n".join(lines) + f"\n\nLast question: {question}"
    try:
        text = "".join(provider.stream([ChatMessage("system", REWRITE_PROMPT), ChatMessage("user", user)], temperature=0.0, cancel=cancel))
    except LLMError:
        return None
    text = text.strip().splitlines()[0].strip().strip('"') if text.strip() else ""
    if not text or len(text) > MAX_REWRITE_CHARS or not stems(text):
        return None  # a model that rambles or answers instead: the offline rewrite is safer
    return text
