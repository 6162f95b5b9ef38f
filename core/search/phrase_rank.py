"""Quoted phrases in hybrid search: a note holding the phrase ranks above one that does not.

The keyword side only returns chunks holding every quoted phrase word for word
(see `core.index.phrase_match`), but the vector side knows nothing of quotes:
a chunk merely about the same subject could outrank the exact phrase the user
asked for. Every hit that holds the phrases is lifted by one shared amount,
just above the best hit that does not, so their own order is kept. The lift is
a named term of the breakdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from core.base.models import Hit, Term
from core.index.analysis import DEFAULT_LANGUAGE, phrase_spans

PHRASE_MARGIN = 1e-4  # how far above the best hit without the phrase the weakest phrase hit lands


def holds_phrases(hit: Hit, phrases: Sequence[str]) -> bool:
    """Whether the hit's title, heading path or text holds every phrase (stop words included)."""
    lang = hit.lang or DEFAULT_LANGUAGE
    texts = (hit.title, hit.chunk.heading_path, hit.text)
    return all(any(phrase_spans(t, p, lang) for t in texts if t) for p in phrases)


def lift_phrase_hits(hits: list[Hit], phrases: Sequence[str]) -> list[Hit]:
    """`hits` with every hit holding all `phrases` above every hit that does not, best first."""
    if not phrases or not hits:
        return hits
    holding = [holds_phrases(h, phrases) for h in hits]
    if not any(holding) or all(holding):
        return hits
    ceiling = max(h.score for h, ok in zip(hits, holding) if not ok)
    floor = min(h.score for h, ok in zip(hits, holding) if ok)
    if floor > ceiling:
        return hits
    quoted = ", ".join(f'"{p}"' for p in phrases)
    term = Term(f"holds {quoted} → above notes without it", ceiling - floor + PHRASE_MARGIN)
    out = [replace(h, score=h.score + term.value, contributions=h.contributions + (term,)) if ok else h for h, ok in zip(hits, holding)]
    out.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return out
