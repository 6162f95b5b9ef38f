"""Text analysis shared by the keyword index and everything that scans text the same way.

The index analyzer decides which words become terms; snippets, highlights and
the answer's word overlap must agree with it, so the word → term mapping lives
here, below the search layer that uses it.
"""

from __future__ import annotations

from whoosh.analysis import Analyzer


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
