"""Typos forgiven: a query word the vault does not hold is corrected from the vault's own words.

A word is checked as the index sees it (its stem): if no chunk holds that term,
the candidates are the vault's terms of the words one slip from the typed word
(`slipped_terms`: a stemmer cuts a typo differently from the word), or failing
those the vault's terms nearest to its stem by edit distance, and the closest
wins. Among equally close ones the query's other words choose (`Together`): the
candidate that shares chunks with more of them ("front matter", not "font
matter"); then the one a dropped letter explains over one a wrong or an extra
letter does ("stae": state, not star); then the most frequent (a typo is far
likelier to be a common word than a rare one). Short words are never corrected
(one edit turns "tag" into "tab": too many real words are one edit apart), nor
is a stop word of a language the vault holds, and a word is left alone when no
vault term is close enough. The search then runs on the corrected query, and the
response says "showing results for …, search instead for …" (`QueryCorrection`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from core.base.models import ParsedQuery, QueryCorrection, SearchFilters
from core.index.analysis import DEFAULT_LANGUAGE, terms_for
from core.index.keyword_index import KeywordIndex
from core.index.vocabulary import TermList, chunks_holding, holds_any, merged_terms, searcher_terms, words_known

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


def slips(word: str) -> set[str]:
    """The words `word` is one slip of the finger away from (`typo_cost` 1).

    The typed word with a letter put back (one was dropped), taken out (doubled
    or stray), two neighbours swapped back, or one letter replaced by a key beside it.
    """
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in NEAR_KEYS.get(b[0], ()) if c.isalpha()}
    out |= {a + c + b for a, b in splits for c in string.ascii_lowercase}
    out.discard(word)
    return out


def slipped_terms(typed: str, vocabulary: Vocabulary, stem: Callable[[str], str | None]) -> dict[str, str]:
    """The vault's terms of the words one slip from `typed` → that word (of several, the shortest).

    Why not only the terms near the typed word's own term: a stemmer does not
    stem a typo as it stems the word. "locaiton" stays "locaiton" while
    "location" is "locat"; "uing" becomes "u" while "using" is "us"; the two
    terms are further apart than the two words. Stemming each word a slip away
    meets the vault's term where it is. Of the words giving one term the
    shortest is kept ("whos", not "whoeds", for "who"): a letter put back
    where the stemmer cuts a suffix off makes words no one writes.
    """
    assert isinstance(vocabulary.terms, TermList)  # Vocabulary makes it one
    found: dict[str, str] = {}
    for word in sorted(slips(typed), key=lambda w: (len(w), w)):
        term = stem(word)
        if term is not None and term not in found and term in vocabulary.terms and vocabulary.holds(term):
            found[term] = word
    return found


def nearest_term(
    term: str,
    vocabulary: Vocabulary,
    edits: int,
    together: Callable[[str], int] | None = None,
    slipped: Collection[str] = (),
) -> str | None:
    """The vocabulary's closest term within `edits` slips (`typo_cost`).

    `slipped` are the terms of the words one slip from the typed word (see
    `slipped_terms`): when there are any, the choice is among them, as the
    typed word itself is closer to them than to any term only its stem is near
    ("surce" is a slip from "source"; its stem "surc" is one letter from
    "src", the word two). Otherwise the terms near `term`. Of equally close
    ones, the one `together` scores higher (how many of the query's other words
    share a chunk with it), then the longer (the typed word dropped a letter of
    it rather than mistyped one), then the most frequent. `together` is asked
    only when there is such a tie.
    """
    if edits <= 0 or not vocabulary.terms:
        return None
    assert isinstance(vocabulary.terms, TermList)  # Vocabulary makes it one
    ranked = [(1, -vocabulary.frequencies.get(cand, 0), cand) for cand in slipped]
    for cand, _dist in [] if ranked else vocabulary.terms.near(term, edits + 1, CANDIDATES):
        cost = typo_cost(term, cand) if cand != term else edits + 1
        if cost <= edits:
            ranked.append((cost, -vocabulary.frequencies.get(cand, 0), cand))
    if not ranked:
        return None
    best = min(ranked)
    tied = [r for r in ranked if r[0] == best[0]]
    if len(tied) < 2:
        return best[2]
    shared = together or (lambda _cand: 0)
    return min(tied, key=lambda r: (-shared(r[2]), len(r[2]) <= len(term), r))[2]  # False first: a letter dropped


def correct_words(
    words: Sequence[str],
    vocabulary: Vocabulary,
    analyse: Callable[[str], list[str]],
    surface: Callable[[str, str], str | None],
    together: Callable[[str], int] | None = None,
    stem: Callable[[str], str | None] | None = None,
) -> dict[str, str]:
    """Typed word → replacement for each word whose term the vault lacks and that has a near term.

    `analyse` turns a typed word into its index terms; `surface` turns a
    corrected term back into a word the vault spells, the nearest to the typed
    word (None if it cannot); `together` breaks ties (see `nearest_term`);
    `stem` gives a word's first term, for the words a slip away (`slipped_terms`).
    """
    out: dict[str, str] = {}
    for word in dict.fromkeys(words):
        terms = analyse(word)  # one term per language the vault is analysed in, English first
        if not terms or any(vocabulary.holds(t) for t in terms):
            continue
        edits = max_edits(word.lower())
        typed = word.lower()
        slipped = slipped_terms(typed, vocabulary, stem) if stem and edits else {}
        near = nearest_term(terms[0], vocabulary, edits, together, slipped)
        if near is None:
            continue
        # No chunk gives a spelling when the term is searched as a stop word ("using" → "us"): the word a slip away.
        spelt = surface(near, typed) or slipped.get(near)
        if spelt and spelt.lower() != word.lower() and _distance(spelt.lower(), word.lower()) <= edits + 2:
            out[word] = spelt
    return out


def _distance(a: str, b: str) -> int:
    """Edits between two words, two neighbours swapped counting one ("generaet" is one from "generate", two from "generated")."""
    from rapidfuzz.distance import OSA  # imported when a word is corrected, not by every search

    return int(OSA.distance(a, b))


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
        unknown = [w for w in unknown if not known[w] and not _function_word(w, index.languages())]
    return unknown if indexes else []


def _function_word(word: str, languages: Sequence[str]) -> bool:
    """Whether `word` is a stop word of one of the vault's languages: a word, not a typo, though no term holds it.

    The index drops such words, and the English term left for them is found
    nowhere: tldr's German "Speicherplatz aller Dateisysteme" had "aller"
    "corrected" to "caller", "eine Anzahl" its "eine" to "en".
    """
    low = word.lower()
    return any(low in terms_for(lang).stops for lang in languages if lang != DEFAULT_LANGUAGE)


def correct_query(query: str, unknown: Sequence[str], indexes: Sequence[KeywordIndex], filters: SearchFilters) -> QueryCorrection | None:
    """`query` with the `unknown` words among its content words (see `unknown_words`) corrected from the vaults' terms."""
    if not indexes or not unknown:
        return None
    terms = merged_terms([_terms(index) for index in indexes])
    vocabulary = Vocabulary(terms, ChunkCounts(indexes, terms))
    analyse = indexes[0].query_terms
    missing = {w.lower() for w in unknown}
    context = [t for w in _WORD.findall(query) if w.lower() not in missing for t in analyse(w)[:1]]
    together = Together(indexes, context)
    stem = indexes[0].stemmer.term  # the English term, as `analyse` gives first
    fixes = correct_words(unknown, vocabulary, analyse, lambda term, typed: _spelt(term, typed, indexes, filters), together, stem)
    return apply_corrections(query, fixes)


class Together:
    """candidate term → how many of the query's other words share a chunk with it in some vault.

    The context that chooses between equally close corrections: "fornt matter"
    is one slip from "font" and from "front", and "front" is the one found
    beside "matter". Counting the words (not the shared chunks) keeps a common
    candidate from winning on its size alone. Asked only when there is a tie: the
    candidate's chunks are read, and each word's postings only skipped through to them.
    """

    def __init__(self, indexes: Sequence[KeywordIndex], context: Sequence[str]) -> None:
        self._indexes = indexes
        self._context = tuple(dict.fromkeys(context))

    def __call__(self, candidate: str) -> int:
        shared: set[str] = set()
        for index in self._indexes:
            with index.reading() as searcher:
                docs = chunks_holding(searcher, candidate)  # a near term of a typo: few chunks
                if docs:
                    shared.update(w for w in self._context if w not in shared and w != candidate and holds_any(searcher, w, docs))
        return len(shared)


def _terms(index: KeywordIndex) -> TermList:
    with index.reading() as searcher:
        return searcher_terms(searcher, index.directory)


SPELLING_HITS = 30  # chunks read at most for the ways the vault writes a corrected term (10: "thong" read as "things")


def _spelt(term: str, typed: str, indexes: Sequence[KeywordIndex], filters: SearchFilters) -> str | None:
    """The vault's spelling of `term` nearest to the `typed` word, among the best chunks holding it.

    "blck" is corrected to the term "block"; the chunk that holds it best may
    write "blocking" first, a word too far from what was typed to offer. Reading
    stops at the first spelling one edit away (none can be nearer), so the common
    case reads a chunk or two; a term whose best chunks write it otherwise is read
    further ("thong": Obsidian Tasks' ten best chunks for "thing" all write "things").
    """
    parsed = ParsedQuery(text=term, terms=(term,), phrases=(), filters=filters)
    spellings: dict[str, int] = {}
    for index in indexes:
        for hit in index.search(parsed, filters, SPELLING_HITS):
            chunk = hit.stored or index.stored([hit.chunk_id]).get(hit.chunk_id)
            if chunk is None:
                continue
            for text in (chunk.title, chunk.body):
                for start, end, found in index.stemmer.spans(text):
                    if found == term:
                        word = text[start:end].lower()
                        spellings.setdefault(word, _distance(word, typed))
            if 1 in spellings.values():
                break  # the closest there can be (the vault never writes the typed word): the first such wins anyway
        if 1 in spellings.values():
            break
    if not spellings:
        return None
    return min(spellings, key=lambda w: spellings[w])  # ties: the first seen, in the best chunk
