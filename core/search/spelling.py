"""Typos forgiven: a query word the vault does not hold is corrected from the vault's own words.

A word is checked as the index sees it (its stem): if no chunk holds that term,
the nearest terms of the vault's vocabulary by edit distance are candidates,
and the closest wins, the most frequent among equally close ones (a typo is far
likelier to be a common word than a rare one). Short words are never corrected
(one edit turns "tag" into "tab": too many real words are one edit apart), and
a word is left alone when no vault term is close enough. The search then runs
on the corrected query, and the response says "showing results for …, search
instead for …" (`QueryCorrection`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from core.base.models import ParsedQuery, QueryCorrection, SearchFilters
from core.index.keyword_index import KeywordIndex
from core.index.vocabulary import TermList, merged_terms, searcher_terms, words_known

MIN_LENGTH = 4  # words shorter than this are never corrected
LONG_WORD = 8  # from this length two edits are allowed, below it one
CANDIDATES = 25  # vocabulary terms looked at per unknown word
FAR_KEY_COST = 2  # replacing a letter by one not beside it on the keyboard: rarely a slip of the finger
_WORD = re.compile(r"\w+", re.UNICODE)
_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, frozenset[str]]:
    pos = {ch: (r, c) for r, row in enumerate(_ROWS) for c, ch in enumerate(row)}
    return {
        ch: frozenset(o for o, (r2, c2) in pos.items() if o != ch and abs(r2 - r) <= 1 and abs(c2 - c) <= 1)
        for ch, (r, c) in pos.items()
    }


NEAR_KEYS = _neighbours()  # QWERTY: a letter and the keys around it (the slips a typo is made of)


def max_edits(word: str) -> int:
    """Edits allowed for a word of this length: 0 (short), 1, or 2 (long)."""
    if len(word) < MIN_LENGTH or not word.isalpha() or not word.isascii():
        return 0  # short, not a word, or beyond the QWERTY letters the slip costs know
    return 2 if len(word) >= LONG_WORD else 1


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """A vault's terms (as indexed) and how many chunks hold each (read as asked: see `ChunkCounts`)."""

    terms: Sequence[str]
    frequencies: Mapping[str, int]

    def __post_init__(self) -> None:
        if not isinstance(self.terms, TermList):
            object.__setattr__(self, "terms", TermList(self.terms))  # grouped by length for near look-ups

    def holds(self, term: str) -> bool:
        return self.frequencies.get(term, 0) > 0


class ChunkCounts(Mapping[str, int]):
    """term → how many chunks hold it in the vaults' titles or bodies (the more of the two, summed over vaults).

    Looked up in the indexes as asked and remembered: a correction weighs only its
    few near terms, so the counts of the whole vocabulary are never read.
    """

    def __init__(self, indexes: Sequence[KeywordIndex], terms: Sequence[str]) -> None:
        self._indexes = indexes
        self._terms = terms
        self._counts: dict[str, int] = {}

    def __getitem__(self, term: str) -> int:
        count = self._counts.get(term)
        if count is None:
            count = self._counts[term] = sum(
                max(index.doc_frequencies([term], field)[term] for field in ("body", "title")) for index in self._indexes
            )
        if not count:
            raise KeyError(term)
        return count

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __len__(self) -> int:
        return len(self._terms)


def typo_cost(typed: str, meant: str) -> int:
    """Edits from `meant` to `typed`, counted as slips of the finger.

    A dropped, doubled or inserted letter costs 1, two neighbours swapped cost 1,
    a letter replaced by a key beside it costs 1 and by any other key
    FAR_KEY_COST: "intent" is not a slip for "invent".
    """
    rows, cols = len(meant) + 1, len(typed) + 1
    d = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        d[i][0] = i
    for j in range(cols):
        d[0][j] = j
    for i in range(1, rows):
        for j in range(1, cols):
            a, b = meant[i - 1], typed[j - 1]
            swap = 1 if a == b else (1 if b in NEAR_KEYS.get(a, frozenset()) else FAR_KEY_COST)
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (0 if a == b else swap))
            if i > 1 and j > 1 and a == typed[j - 2] and meant[i - 2] == b and a != b:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)  # two neighbours swapped
    return d[-1][-1]


def nearest_term(term: str, vocabulary: Vocabulary, edits: int) -> str | None:
    """The vocabulary's closest term within `edits` slips (`typo_cost`), the most frequent of equally close ones."""
    if edits <= 0 or not vocabulary.terms:
        return None
    assert isinstance(vocabulary.terms, TermList)  # Vocabulary makes it one
    ranked = []
    for cand, _dist in vocabulary.terms.near(term, edits + 1, CANDIDATES):
        cost = typo_cost(term, cand) if cand != term else edits + 1
        if cost <= edits:
            ranked.append((cost, -vocabulary.frequencies.get(cand, 0), cand))
    return min(ranked)[2] if ranked else None


def correct_words(
    words: Sequence[str], vocabulary: Vocabulary, analyse: Callable[[str], list[str]], surface: Callable[[str], str | None]
) -> dict[str, str]:
    """Typed word → replacement for each word whose term the vault lacks and that has a near term.

    `analyse` turns a typed word into its index terms; `surface` turns a
    corrected term back into a word the vault spells (None if it cannot).
    """
    out: dict[str, str] = {}
    for word in dict.fromkeys(words):
        terms = analyse(word)  # one term per language the vault is analysed in, English first
        if not terms or any(vocabulary.holds(t) for t in terms):
            continue
        edits = max_edits(word.lower())
        near = nearest_term(terms[0], vocabulary, edits)
        if near is None:
            continue
        spelt = surface(near)
        if spelt and spelt.lower() != word.lower() and _levenshtein(spelt.lower(), word.lower()) <= edits + 2:
            out[word] = spelt
    return out


def _levenshtein(a: str, b: str) -> int:
    from rapidfuzz.distance import Levenshtein  # imported when a word is corrected, not by every search

    return int(Levenshtein.distance(a, b))


def apply_corrections(query: str, fixes: Mapping[str, str]) -> QueryCorrection | None:
    """The query with each typed word replaced (whole words, as typed), or None when nothing changed."""
    if not fixes:
        return None

    def swap(m: re.Match[str]) -> str:
        return fixes.get(m.group(0), m.group(0))

    corrected = _WORD.sub(swap, query)
    if corrected == query:
        return None
    return QueryCorrection(original=query, corrected=corrected, words=tuple(fixes.items()))


def unknown_words(words: Sequence[str], indexes: Sequence[KeywordIndex]) -> list[str]:
    """The words long enough to correct whose terms no vault holds: the only ones correction looks at.

    One term-table probe per word and vault, remembered until the index changes
    (`core.index.vocabulary.words_known`): the common query, every word known, costs no more.
    """
    unknown = [w for w in dict.fromkeys(words) if max_edits(w.lower()) > 0]
    for index in indexes:
        if not unknown:
            break
        with index.reading() as searcher:
            known = words_known(searcher, unknown, index.query_terms)
        unknown = [w for w in unknown if not known[w]]
    return unknown if indexes else []


def correct_query(query: str, unknown: Sequence[str], indexes: Sequence[KeywordIndex], filters: SearchFilters) -> QueryCorrection | None:
    """`query` with the `unknown` words among its content words (see `unknown_words`) corrected from the vaults' terms."""
    if not indexes or not unknown:
        return None
    terms = merged_terms([_terms(index) for index in indexes])
    vocabulary = Vocabulary(terms, ChunkCounts(indexes, terms))
    fixes = correct_words(unknown, vocabulary, indexes[0].query_terms, lambda term: _spelt(term, indexes, filters))
    return apply_corrections(query, fixes)


def _terms(index: KeywordIndex) -> TermList:
    with index.reading() as searcher:
        return searcher_terms(searcher, index.directory)


def _spelt(term: str, indexes: Sequence[KeywordIndex], filters: SearchFilters) -> str | None:
    """A word of the vault whose index term is `term`, as written in the best chunk holding it."""
    parsed = ParsedQuery(text=term, terms=(term,), phrases=(), filters=filters)
    for index in indexes:
        for hit in index.search(parsed, filters, 1):
            chunk = hit.stored or index.stored([hit.chunk_id]).get(hit.chunk_id)
            if chunk is None:
                continue
            for text in (chunk.title, chunk.body):
                for start, end, found in index.stemmer.spans(text):
                    if found == term:
                        return text[start:end].lower()
    return None
