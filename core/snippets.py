"""Short excerpts of a chunk around the words that matched, with the matches marked.

Matches are marked `**like this**` (Markdown bold), which the CLI prints as is
and the app turns into highlighting.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from whoosh.analysis import Analyzer

DEFAULT_WIDTH = 240
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
MARK_OPEN = "**"
MARK_CLOSE = "**"


class Stemmer:
    """The index analyzer's word → term mapping, memoised, for text that is only scanned.

    Running the full Whoosh analyzer over every shown chunk cost ~2 ms a hit; this
    does the same steps (token pattern, lower case, stop words, Porter stem,
    accent folding) with a per-word cache. A test holds it equal to the analyzer.
    """

    def __init__(self, analyzer: Analyzer) -> None:
        items = list(getattr(analyzer, "items", ()))
        tokenizer = items[0]
        self._pattern = tokenizer.expression
        self._stops: frozenset[str] = frozenset()
        self._stem = lambda w: w
        self._fold: dict[int, str] = {}
        for item in items[1:]:
            if hasattr(item, "stops"):
                self._stops, self._min = frozenset(item.stops), item.min
            elif hasattr(item, "stemfn"):
                self._stem = item.stemfn
            elif hasattr(item, "charmap"):
                self._fold = item.charmap
        self._min = getattr(self, "_min", 1)
        self._cache: dict[str, str | None] = {}

    def term(self, word: str) -> str | None:
        cached = self._cache.get(word, "")
        if cached != "":
            return cached
        low = word.lower()
        term = None if (low in self._stops or len(low) < self._min) else self._stem(low).translate(self._fold)
        if len(self._cache) < 100_000:
            self._cache[word] = term
        return term

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        out = []
        for m in self._pattern.finditer(text):
            term = self.term(m.group(0))
            if term is not None:
                out.append((m.start(), m.end(), term))
        return out


def make_snippet(text: str, stems: Collection[str], stemmer: Stemmer, width: int = DEFAULT_WIDTH) -> str:
    """The `width`-character window with the most distinct matched stems."""
    flat = " ".join(_EMPHASIS.sub("", text).split())
    if not flat:
        return ""
    spans = []
    if stems:
        spans = [span for span in stemmer.spans(flat) if span[2] in stems]
    if not spans:
        return _clip(flat, 0, width)
    best_start, best_count = 0, -1
    for i, (start, _, _) in enumerate(spans):
        distinct = {t for s, _, t in spans[i:] if s < start + width}
        if len(distinct) > best_count:
            best_start, best_count = start, len(distinct)
    begin = max(0, best_start - width // 4)
    if begin > 0:
        space = flat.rfind(" ", 0, begin)
        begin = space + 1 if space != -1 and begin - space < 30 else begin
    end = min(len(flat), begin + width)
    out: list[str] = []
    pos = begin
    for s, e, _ in spans:
        if s < pos or e > end:
            continue
        out.append(flat[pos:s])
        out.append(f"{MARK_OPEN}{flat[s:e]}{MARK_CLOSE}")
        pos = e
    out.append(flat[pos:end])
    prefix = "…" if begin > 0 else ""
    suffix = "…" if end < len(flat) else ""
    return prefix + "".join(out) + suffix


def _clip(flat: str, start: int, width: int) -> str:
    if len(flat) <= width:
        return flat
    cut = flat.rfind(" ", start, start + width)
    cut = cut if cut > start + width // 2 else start + width
    return flat[start:cut] + "…"
