"""The offline answer: the most relevant sentences of the top sources, each cited.

No language model is involved, so nothing is paraphrased and nothing invented;
the answer says plainly that it is extractive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from core.answer.context import stems
from core.answer.models import Source
from core.vault.links import labelled_text

MAX_SOURCES = 4
MAX_CANDIDATES = 48
LABEL = "Extractive answer (no language model configured) — the most relevant lines from your notes:"
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*\[])")
_MARKUP = re.compile(r"\*\*|__|`|\[\[|\]\]")
_LINE_START = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)")


def _sentences(text: str) -> list[str]:
    """Sentences of prose and list items; headings, code and table rules are left out."""
    out: list[str] = []
    paragraph: list[str] = []
    in_code = False

    def close() -> None:
        if paragraph:
            joined = " ".join(paragraph)
            out.extend(p.strip() for p in _SENTENCE.split(joined) if len(p.strip()) >= 12)
            paragraph.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            close()
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith("#") or set(stripped) <= set("-|: "):
            close()
            continue
        if _LINE_START.match(line) or stripped.startswith("|"):
            close()
            stripped = _LINE_START.sub("", line).strip().strip("|").replace(" | ", "; ")
        paragraph.append(_MARKUP.sub("", labelled_text(stripped)))  # `[[a|b]]` reads as "b"
    close()
    return out


def extract_answer(
    question: str,
    sources: Sequence[Source],
    max_sentences: int = 4,
    embed: Callable[[list[str]], np.ndarray] | None = None,
) -> str:
    """Pick sentences by meaning (when an embedder is at hand) and by shared words."""
    wanted = stems(question)
    candidates = [(s.number, i, sentence) for s in sources[:MAX_SOURCES] for i, sentence in enumerate(_sentences(s.text))]
    candidates = candidates[:MAX_CANDIDATES]
    if not candidates:
        return LABEL + "\n- (the matching notes have no prose to quote; open the sources below)"
    similarity = [0.0] * len(candidates)
    if embed is not None:
        vectors = embed([question] + [c[2] for c in candidates])
        similarity = [float(v) for v in vectors[1:] @ vectors[0]]
    scored = []
    for (number, i, sentence), sim in zip(candidates, similarity):
        overlap = len(wanted & stems(sentence)) / max(1, len(wanted))
        score = sim + 0.5 * overlap + 0.05 / number - 0.002 * i  # earlier sources and sentences win ties
        scored.append((score, number, i, sentence))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    picked: list[tuple[int, int, str]] = []
    per_source: dict[int, int] = {}
    sources_by_number = {s.number: s for s in sources}
    best = scored[0][0]
    for score, number, i, sentence in scored:
        # Another note must earn its place: a weak sentence from it mostly adds a wrong citation.
        other_note = picked and sources_by_number[number].rel_path != sources_by_number[picked[0][0]].rel_path
        if per_source.get(number, 0) >= 2 or (picked and score < (0.85 if other_note else 0.6) * best):
            continue
        per_source[number] = per_source.get(number, 0) + 1
        picked.append((number, i, sentence))
        if len(picked) >= max_sentences:
            break
    picked.sort()
    lines = [f"- {sentence} [{number}]" for number, _, sentence in picked]
    return LABEL + "\n" + "\n".join(lines)
