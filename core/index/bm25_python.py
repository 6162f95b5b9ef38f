"""Whoosh's BM25F in plain Python, for a process that has not loaded numpy.

`core.index.bm25_fast` scores with numpy arrays; a one-query process (a keyword
`cairn search`) would spend more on importing numpy (~70 ms) than on scoring a
typical query here (a few thousand postings at ~0.4 us each). The formula, idf,
average and per-document field lengths are the same as there (field lengths as
float32, as Whoosh's byte codes decode there), and so is the order: score
descending, then document number. Past a budget of postings `top` gives up and
the caller scores with numpy, so a query with huge posting lists is never slow.
"""

from __future__ import annotations

import heapq
import threading
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from core.index.w3_read import UnknownLayout, length_codes, term_postings
from core.index.whoosh_pin import LENGTH_OF_BYTE

NAN = float("nan")


class _Lengths:
    """One segment's field lengths by document number, decoded lazily from Whoosh's byte column."""

    __slots__ = ("codes", "table", "reader", "field")

    def __init__(self, codes: bytes | None, table: Sequence[float] | None, reader: Any = None, field: str = "") -> None:
        self.codes = codes
        self.table = table
        self.reader = reader  # the slow public way, when the column is not laid out as expected
        self.field = field

    def get(self, docnum: int) -> float:
        if self.table is None:
            return float(self.reader.doc_field_length(docnum, self.field, 1))
        if self.codes is None:
            return 1.0  # no lengths column: what doc_field_length(i, field, 1) gives
        return self.table[self.codes[docnum]] if docnum < len(self.codes) else self.table[0]


class LengthCache:
    """Decoded length columns per (segment, field); segments are immutable, so this outlives commits."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._items: dict[tuple[str, int, str], _Lengths] = {}
        self._lock = threading.Lock()

    def lengths(self, reader: Any, field: str) -> _Lengths:
        key = (reader.segment().segment_id(), reader.doc_count_all(), field)
        with self._lock:
            got = self._items.get(key)
        if got is None:
            got = _read_lengths(reader, field)
            with self._lock:
                if len(self._items) >= self._size:
                    self._items.clear()
                self._items[key] = got
        return got


def _read_lengths(reader: Any, field: str) -> _Lengths:
    """One field's length codes (`w3_postings.length_codes`), decoded as float32 like the numpy path."""
    table = array("f", LENGTH_OF_BYTE)
    table[0] = NAN  # a 0 byte: no tokens (such a document has no postings to score)
    try:
        return _Lengths(length_codes(reader, field), table)
    except UnknownLayout:
        return _Lengths(None, None, reader, field)


def weighted_clauses(
    searcher: Any, clauses: Sequence[tuple[str, str]], field_weights: dict[str, float] | None, clause_weights: Sequence[float] | None
) -> Iterator[tuple[str, str, float, float]]:
    """Each clause that counts, as (field, text, weighted idf, average field length): what both
    BM25F paths (this one and `FastBM25F`'s numpy one) score with."""
    for i, (field, text) in enumerate(clauses):
        weight = 1.0 if field_weights is None else field_weights.get(field, 1.0)
        if clause_weights is not None:
            weight *= clause_weights[i]
        if weight == 0.0:
            continue
        yield field, text, weight * searcher.idf(field, text), searcher.avg_field_length(field) or 1


def top(
    searcher: Any,
    readers: Sequence[tuple[Any, int]],
    clauses: Sequence[tuple[str, str]],
    limit: int,
    k1: float,
    b: float,
    lengths: LengthCache,
    *,
    field_weights: dict[str, float] | None = None,
    exclude: set[int] | frozenset[int] = frozenset(),
    include: set[int] | frozenset[int] | None = None,
    clause_weights: Sequence[float] | None = None,
    budget: int | None = None,
) -> list[tuple[int, float]] | None:
    """Top `limit` (docnum, score) pairs, as `FastBM25F.top`; None once more than `budget` postings were read."""
    scores: dict[int, float] = {}
    read = 0
    for field, text, idf, avgfl in weighted_clauses(searcher, clauses, field_weights, clause_weights):
        lift = idf * (k1 + 1)
        for reader, offset in readers:
            posting = term_postings(reader, field, text)
            if posting is None:
                continue
            ids, tfs = posting
            read += len(ids)
            if budget is not None and read > budget:
                return None
            fl = lengths.lengths(reader, field).get
            get = scores.get
            for docnum, tf in zip(ids, tfs):
                d = docnum + offset
                scores[d] = get(d, 0.0) + lift * tf / (tf + k1 * ((1 - b) + b * fl(docnum) / avgfl))
    for reader, offset in readers:
        deleted = reader.deleted_docs_set if hasattr(reader, "deleted_docs_set") else ()
        for d in deleted or ():
            scores.pop(d + offset, None)
    for d in exclude:
        scores.pop(d, None)
    if include is not None:
        scores = {d: s for d, s in scores.items() if d in include}
    # `s > 0` also drops NaN, as the numpy path's `scores > 0` does.
    best = heapq.nsmallest(limit, ((-s, d) for d, s in scores.items() if s > 0))
    return [(d, -neg) for neg, d in best]
