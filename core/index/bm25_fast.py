"""Whoosh's BM25F, computed with numpy over Whoosh's own postings.

Whoosh scores an OR of many terms one posting at a time in Python: a
15-word natural-language question over 10k chunks costs ~45 ms of CPU.
This module reads the same postings block by block into arrays (cached per
segment: Whoosh segments are immutable, so a cache outlives commits) and
applies the same formula (`whoosh.scoring.bm25`, same idf, same average and
per-document field lengths, field boosts already folded into the stored
weights). Scores match Whoosh's to float precision; a test holds it to that.
Postings and length columns are read by `core.index.w3_postings`, as for
the plain-Python path.

A process that has not loaded numpy (a keyword `cairn search`: importing numpy is
~0.07 s of a ~0.4 s process) scores in plain Python instead (`core.index.bm25_python`),
the same formula over the same postings, up to `PYTHON_POSTINGS` postings a query;
beyond that numpy is loaded after all.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.index import bm25_python
from core.index.w3_read import UnknownLayout, length_codes, term_postings
from core.index.whoosh_pin import LENGTH_OF_BYTE

if TYPE_CHECKING:
    import numpy as np

MAX_CACHED_SEGMENTS = 64
# Postings scored in plain Python (~0.4 us each here) before numpy is worth importing (~70 ms).
PYTHON_POSTINGS = 120_000


class _SegmentData:
    """Per-segment arrays: field lengths and term postings (immutable, so cacheable).

    The arrays are shared by every thread, but each read goes through the reader of the
    calling thread's searcher: a Whoosh reader's files are read with seek + read, so one
    reader used from two threads at once returns the other thread's bytes.
    """

    def __init__(self, reader: Any) -> None:
        self.doc_count_all = reader.doc_count_all()
        self.lengths: dict[str, np.ndarray] = {}
        self.postings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray] | None] = {}

    def field_lengths(self, reader: Any, field: str) -> np.ndarray:
        import numpy as np

        arr = self.lengths.get(field)
        if arr is None:
            arr = _bulk_field_lengths(reader, field, self.doc_count_all)
            if arr is None:  # the public, slower way: one Python call per document
                dfl = reader.doc_field_length
                arr = np.fromiter((dfl(i, field, 1) for i in range(self.doc_count_all)), dtype=np.float32, count=self.doc_count_all)
            self.lengths[field] = arr
        return arr

    def term(self, reader: Any, field: str, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        key = (field, text)
        if key not in self.postings:
            self.postings[key] = _read_postings(reader, field, text)
        return self.postings[key]


def _bulk_field_lengths(reader: Any, field: str, count: int) -> np.ndarray | None:
    """A segment's field lengths from their byte codes (`w3_postings.length_codes`), decoded
    through Whoosh's own table. Same values as `doc_field_length` (a 0 byte, no tokens, is NaN
    here: such a document has no postings to score); None where the layout is not known."""
    import numpy as np

    try:
        stored = length_codes(reader, field)
    except UnknownLayout:
        return None
    if stored is None:
        return np.ones(count, dtype=np.float32)  # what doc_field_length(i, field, 1) gives
    codes = np.zeros(count, dtype=np.uint8)  # documents past the column's end have the default, 0
    codes[: len(stored)] = np.frombuffer(stored, dtype=np.uint8)
    table = np.asarray(LENGTH_OF_BYTE, dtype=np.float32)
    table[0] = np.nan
    return table[codes]


def _read_postings(reader: Any, field: str, text: str) -> tuple[np.ndarray, np.ndarray] | None:
    import numpy as np

    found = term_postings(reader, field, text)
    if found is None:
        return None
    return np.asarray(found[0], dtype=np.int64), np.asarray(found[1], dtype=np.float64)


class FastBM25F:
    """Scores OR-queries of (field, term) clauses over a Whoosh searcher."""

    def __init__(self, b: float = 0.75, k1: float = 1.2) -> None:
        self.b = b
        self.k1 = k1
        self._segments: OrderedDict[str, _SegmentData] = OrderedDict()
        self._lock = threading.Lock()
        self._python_lengths = bm25_python.LengthCache()
        self.force_python = False  # tests: always the plain-Python path, however many postings

    def top(
        self,
        searcher: Any,
        clauses: Sequence[tuple[str, str]],
        limit: int,
        *,
        field_weights: dict[str, float] | None = None,
        exclude: set[int] | frozenset[int] = frozenset(),
        include: set[int] | frozenset[int] | None = None,
        clause_weights: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """Top `limit` (docnum, score) pairs; docnums are the searcher's global numbers.

        `clause_weights`, one per clause, scales each clause on top of its field's
        weight (the search's feedback terms count less than the typed words).
        """
        readers = _leaf_readers(searcher.ixreader)
        total = sum(r.doc_count_all() for r, _ in readers)
        if total == 0 or not clauses:
            return []
        if "numpy" not in sys.modules or self.force_python:
            top = bm25_python.top(
                searcher, readers, clauses, limit, self.k1, self.b, self._python_lengths,
                field_weights=field_weights, exclude=exclude, include=include, clause_weights=clause_weights,
                budget=None if self.force_python else PYTHON_POSTINGS,
            )  # fmt: skip
            if top is not None:
                return top
        scores = self._numpy_scores(searcher, readers, total, clauses, field_weights, clause_weights)
        _mask(scores, readers, exclude, include)
        return _ranked(scores, limit)

    def _numpy_scores(
        self,
        searcher: Any,
        readers: list[tuple[Any, int]],
        total: int,
        clauses: Sequence[tuple[str, str]],
        field_weights: dict[str, float] | None,
        clause_weights: Sequence[float] | None,
    ) -> Any:
        """Every document's BM25F score over all segments, as one numpy array by global docnum."""
        import numpy as np

        scores = np.zeros(total, dtype=np.float64)
        k1, b = self.k1, self.b
        segments = [(self._segment(reader), reader, offset) for reader, offset in readers]
        for field, text, idf, avgfl in bm25_python.weighted_clauses(searcher, clauses, field_weights, clause_weights):
            for seg, reader, offset in segments:
                posting = seg.term(reader, field, text)
                if posting is None:
                    continue
                ids, tf = posting
                fl = seg.field_lengths(reader, field)[ids]
                scores[ids + offset] += idf * ((tf * (k1 + 1)) / (tf + k1 * ((1 - b) + b * fl / avgfl)))
        return scores

    def _segment(self, reader: Any) -> _SegmentData:
        segid = reader.segment().segment_id()
        with self._lock:
            seg = self._segments.get(segid)
            if seg is None or seg.doc_count_all != reader.doc_count_all():
                seg = _SegmentData(reader)
                self._segments[segid] = seg
                while len(self._segments) > MAX_CACHED_SEGMENTS:
                    self._segments.popitem(last=False)
            else:
                self._segments.move_to_end(segid)
            return seg


def _mask(scores: Any, readers: list[tuple[Any, int]], exclude: set[int] | frozenset[int], include: set[int] | frozenset[int] | None) -> None:
    """Zero the scores of deleted documents, of `exclude`, and of everything outside `include`."""
    import numpy as np

    for reader, offset in readers:
        deleted = reader.deleted_docs_set if hasattr(reader, "deleted_docs_set") else ()
        if deleted:
            scores[np.fromiter(deleted, dtype=np.int64) + offset] = 0.0
    if exclude:
        scores[np.fromiter(exclude, dtype=np.int64)] = 0.0
    if include is not None:
        keep = np.zeros(len(scores), dtype=bool)
        if include:
            keep[np.fromiter(include, dtype=np.int64)] = True
        scores[~keep] = 0.0


def _ranked(scores: Any, limit: int) -> list[tuple[int, float]]:
    """The `limit` best (docnum, score) pairs with a score, best first, ties by docnum."""
    import numpy as np

    candidates = np.flatnonzero(scores > 0)
    if len(candidates) > limit:
        part = np.argpartition(-scores[candidates], limit - 1)[:limit]
        candidates = candidates[part]
    order = np.lexsort((candidates, -scores[candidates]))
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


def _leaf_readers(reader: Any) -> list[tuple[Any, int]]:
    if hasattr(reader, "readers") and hasattr(reader, "doc_offsets"):
        return list(zip(reader.readers, reader.doc_offsets))
    return [(reader, 0)]
