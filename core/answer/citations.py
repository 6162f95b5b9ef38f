"""Find the `[n]` markers in a model's answer and check each against the sources."""

from __future__ import annotations

import re
from dataclasses import dataclass

_GAP = "\x00"
_MARKER = re.compile(r"\[(\s*\d+(?:\s*[,;]\s*\d+)*\s*)\]")


@dataclass(frozen=True, slots=True)
class CitationCheck:
    text: str  # the answer with markers that point nowhere removed
    cited: tuple[int, ...]  # valid source numbers, in order of first use
    invalid: tuple[int, ...]


def check_citations(answer: str, n_sources: int) -> CitationCheck:
    cited: list[int] = []
    invalid: list[int] = []

    def repl(m: re.Match[str]) -> str:
        numbers = [int(x) for x in re.split(r"[,;]", m.group(1))]
        good = [n for n in numbers if 1 <= n <= n_sources]
        for n in numbers:
            target = cited if n in good else invalid
            if n not in target:
                target.append(n)
        return "[" + ", ".join(str(n) for n in good) + "]" if good else _GAP

    text = _MARKER.sub(repl, answer)
    # Tidy the gap a removed marker leaves ("word [9]." -> "word."), and only there: a space
    # before punctuation elsewhere may be code (`lsof -i :8000`).
    text = re.sub(r"[ \t]*" + _GAP + r"(?=[.,;:!?])", "", text).replace(_GAP, "")
    return CitationCheck(text, tuple(cited), tuple(invalid))
