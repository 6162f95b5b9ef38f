"""Whoosh's BM25F, computed with numpy over Whoosh's own postings.

Whoosh scores an OR of many terms one posting at a time in Python: a
15-word natural-language question over 10k chunks costs ~45 ms of CPU.
This module reads the same postings block by block into arrays (cached per
segment: Whoosh segments are immutable, so a cache outlives commits) and
applies the same formula (`whoosh.scoring.bm25`, same idf, same average and
per-document field lengths, field boosts already folded into the stored
weights). Scores match Whoosh's to float precision; a test holds it to that.
It relies on the block layout of whoosh-reloaded 2.7.5 (pinned) and falls
back to the public matcher API if that layout is not there.

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
    """A segment's field lengths read as one byte string and decoded through Whoosh's own table.

    Whoosh stores each document's field length as one byte (a log-scale code) in a
    fixed-width column; asking for them one document at a time cost ~250 ms per field on
    30k chunks, most of a cold `cairn search`. Same values as `doc_field_length` (a 0
    byte, no tokens, is NaN there as here: such a document has no postings to score).
    None when the segment is not laid out as whoosh-reloaded 2.7.5 writes it.
    """
    import numpy as np

    try:
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
        from whoosh.util.numeric import _length_byte_cache

        column = reader._perdoc._cached_reader(_lenfield(field), LENGTHS_COLUMN)
        if column is None:
            return np.ones(count, dtype=np.float32)  # what doc_field_length(i, field, 1) gives
        if column._fixedlen != 1:
            return None
        stored = min(column._count, count)
        codes = np.zeros(count, dtype=np.uint8)  # documents past the column's end have the default, 0
        if stored:
            codes[:stored] = np.frombuffer(bytes(column._dbfile.get(column._basepos, stored)), dtype=np.uint8)
    except (AttributeError, ImportError, TypeError, ValueError):
        return None
    table = np.asarray(_length_byte_cache, dtype=np.float32)
    table[0] = np.nan
    return table[codes]


def _read_postings(reader: Any, field: str, text: str) -> tuple[np.ndarray, np.ndarray] | None:
    import numpy as np

    if (field, text) not in reader:
        return None
    fmt = reader.schema[field].format
    raw = reader._terms.matcher(field, reader._text_to_bytes(field, text), fmt)  # no deletion filter: masked later
    ids: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    if all(hasattr(raw, a) for a in ("_read_ids", "_read_weights", "_lastblock", "_goto", "_nextoffset")):
        while True:
            raw._read_ids()
            raw._read_weights()
            ids.append(np.asarray(raw._ids, dtype=np.int64))
            weights.append(np.asarray(raw._weights, dtype=np.float64))
            if raw._lastblock:
                break
            raw._goto(raw._nextoffset)
    else:  # the public, slower way
        id_list, w_list = [], []
        while raw.is_active():
            id_list.append(raw.id())
            w_list.append(raw.weight())
            raw.next()
        ids.append(np.asarray(id_list, dtype=np.int64))
        weights.append(np.asarray(w_list, dtype=np.float64))
    return np.concatenate(ids), np.concatenate(weights)


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
        for reader, offset in readers:
            deleted = reader.deleted_docs_set if hasattr(reader, "deleted_docs_set") else ()
            if deleted:
                scores[np.fromiter(deleted, dtype=np.int64) + offset] = 0.0
        if exclude:
            scores[np.fromiter(exclude, dtype=np.int64)] = 0.0
        if include is not None:
            keep = np.zeros(total, dtype=bool)
            if include:
                keep[np.fromiter(include, dtype=np.int64)] = True
            scores[~keep] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:
            part = np.argpartition(-scores[candidates], limit - 1)[:limit]
            candidates = candidates[part]
        order = np.lexsort((candidates, -scores[candidates]))
        return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]

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


def _leaf_readers(reader: Any) -> list[tuple[Any, int]]:
    if hasattr(reader, "readers") and hasattr(reader, "doc_offsets"):
        return list(zip(reader.readers, reader.doc_offsets))
    return [(reader, 0)]
