"""A keyword index's vocabulary: which words it knows, and its title and body terms for near matches.

What spelling correction (core.search.spelling) asks of the index on every search.
Both answers are kept per searcher: a searcher is one state of the index, and a
changed index (a live edit) gets a new one, so nothing here is ever stale.

- `words_known`: whether the index holds a typed word (any of its analysed terms in
  a title or body). Asked for every content word of every query, so it is one term
  table probe per field, remembered per word.
- `searcher_terms`: every title and body term, read only when a query has a word the
  vault lacks. It lists the term tables' keys without decoding their postings
  information (the counts are looked up for the few near terms only), and groups the
  terms by length: a term more than `distance` letters longer or shorter than the
  typed one cannot be within `distance` edits of it, so a near-match look-up reads a
  few lengths' terms instead of the whole vocabulary.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

FIELDS = ("body", "title")


class TermList(Sequence[str]):
    """Terms in a fixed order, grouped by length for `near`; equal by identity (it is a cache key)."""

    __slots__ = ("__weakref__", "_by_length", "_terms")

    def __init__(self, terms: Iterable[str]) -> None:
        self._terms = tuple(terms)
        self._by_length: dict[int, tuple[list[str], list[int]]] = {}
        for pos, term in enumerate(self._terms):
            group = self._by_length.setdefault(len(term), ([], []))
            group[0].append(term)
            group[1].append(pos)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return self._terms[i]

    def __len__(self) -> int:
        return len(self._terms)

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def near(self, term: str, distance: int, limit: int) -> list[tuple[str, int]]:
        """Up to `limit` terms within `distance` Levenshtein edits of `term`, closest first, ties in list order.

        The same answer as rapidfuzz's `process.extract` over the whole list with
        `score_cutoff=distance`, read from the lengths that can be that close.
        """
        from rapidfuzz import process  # imported by the first query with a word the vault lacks
        from rapidfuzz.distance import Levenshtein

        found: list[tuple[int, int, str]] = []
        for length in range(max(1, len(term) - distance), len(term) + distance + 1):
            group = self._by_length.get(length)
            if group is None:
                continue
            for cand, dist, idx in process.extract(term, group[0], scorer=Levenshtein.distance, score_cutoff=distance, limit=limit):
                found.append((int(dist), group[1][idx], cand))
        found.sort()
        return [(cand, dist) for dist, _pos, cand in found[:limit]]


class _SearcherWords:
    """What one searcher's state of the index knows of words: filled as queries ask."""

    __slots__ = ("known", "terms")

    def __init__(self) -> None:
        self.known: dict[str, bool] = {}
        self.terms: TermList | None = None


_cache: weakref.WeakKeyDictionary[Any, _SearcherWords] = weakref.WeakKeyDictionary()
_merged: dict[str, tuple[tuple[TermList, ...], TermList]] = {}  # "last": the last several vaults' merge
_lock = threading.Lock()


def _entry(searcher: Any) -> _SearcherWords:
    with _lock:
        entry = _cache.get(searcher)
        if entry is None:
            entry = _cache[searcher] = _SearcherWords()
        return entry


def words_known(searcher: Any, words: Iterable[str], analyse: Callable[[str], list[str]]) -> dict[str, bool]:
    """word → whether this state of the index holds it: a word with no terms (a stop word) counts as known.

    `analyse` gives a word's index terms (one per language the vault is analysed in).
    """
    entry = _entry(searcher)
    reader = None
    out: dict[str, bool] = {}
    for word in words:
        known = entry.known.get(word)
        if known is None:
            reader = reader or searcher.reader()
            terms = analyse(word)
            known = not terms or any((field, t) in reader for t in terms for field in FIELDS)
            entry.known[word] = known
        out[word] = known
    return out


def searcher_terms(searcher: Any) -> TermList:
    """Every title and body term of this state of the index: the body's in index order, then the title's others."""
    entry = _entry(searcher)
    if entry.terms is not None:
        return entry.terms
    reader = searcher.reader()
    indexed = reader.indexed_field_names()
    seen: dict[str, None] = {}
    for field in FIELDS:
        if field in indexed:
            for raw in reader.lexicon(field):
                seen[raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)] = None
    entry.terms = TermList(seen)
    return entry.terms


def merged_terms(lists: Sequence[TermList]) -> TermList:
    """The terms of several vaults, each once, in the order of `lists` (the last merge is kept)."""
    if len(lists) == 1:
        return lists[0]
    key = tuple(lists)
    with _lock:
        cached = _merged.get("last")
    if cached is not None and len(cached[0]) == len(key) and all(a is b for a, b in zip(cached[0], key, strict=True)):
        return cached[1]
    merged = TermList(dict.fromkeys(t for terms in lists for t in terms))
    with _lock:
        _merged["last"] = (key, merged)
    return merged
