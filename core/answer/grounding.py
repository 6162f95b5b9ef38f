"""Is a model's citation backed by the source it names? A marker that merely exists is not enough.

A claim (the sentence or line a `[n]` marker ends) is supported by source n when
the source holds enough of the claim's key words, or when the model copied a
piece of code or a command from it. Small local models cite at random; a
citation that fails this check is removed and reported, and an answer left with
no supported citation is not shown as the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.context import question_stems, stems
from core.answer.models import Source

_GAP = "\x00"
MIN_SHARED = 0.25  # share of the claim's key words the cited source must hold
_CLAIM = re.compile(r"[^\n.!?]*?(?:\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\])+[.!?]?", re.DOTALL)
_MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_CODE = re.compile(r"`([^`\n]{3,})`")


@dataclass(frozen=True, slots=True)
class Grounded:
    text: str  # the answer with unsupported markers removed
    supported: tuple[int, ...]  # source numbers cited with support, in order of first use
    unsupported: tuple[int, ...]  # source numbers whose citations were removed


def supports(claim: str, source: Source) -> bool:
    """The source shares the claim's key words, or holds a command the claim quotes."""
    body = source.text
    if any(code.strip() in body for code in _CODE.findall(claim)):
        return True
    wanted = question_stems(_MARKER.sub(" ", claim))
    if not wanted:
        return True  # "See [2]." says nothing that could be wrong
    have = stems(f"{source.title} {source.heading_path} {body}")
    return len(wanted & have) / len(wanted) >= MIN_SHARED


def check_support(answer: str, sources: Sequence[Source]) -> Grounded:
    """Remove each marker whose source does not support its claim."""
    by_number = {s.number: s for s in sources}
    supported: list[int] = []
    unsupported: list[int] = []

    def claim_repl(m: re.Match[str]) -> str:
        claim = m.group(0)

        def marker_repl(mm: re.Match[str]) -> str:
            numbers = [int(x) for x in re.split(r"[,;]", mm.group(1))]
            kept = []
            for n in numbers:
                source = by_number.get(n)
                if source is not None and supports(claim, source):
                    kept.append(n)
                    if n not in supported:
                        supported.append(n)
                elif source is not None and n not in unsupported:
                    unsupported.append(n)
            return "[" + ", ".join(map(str, kept)) + "]" if kept else _GAP

        return _MARKER.sub(marker_repl, claim)

    text = _CLAIM.sub(claim_repl, answer)
    # Close the gap a removed marker leaves before punctuation ("claim [9]." -> "claim."), only there.
    text = re.sub(r"[ \t]*" + _GAP + r"(?=[.,;:!?)]|\s|$)", "", text).replace(_GAP, "")
    return Grounded(text, tuple(supported), tuple(unsupported))
