"""Whoosh's W3 posting format, read: a term's blocks decoded without Whoosh's matcher.

Split from `core.index.w3_postings`, which writes the same bytes. A term's blocks are decoded
here (`blocks`) for a merge (`decode_postings`) and for both BM25F scorers (`term_postings`),
and a field's length column is read here (`length_codes`), instead of through Whoosh's matcher
one posting at a time.
"""

from __future__ import annotations

import io
import pickle
import zlib
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Any

from core.index.w3_postings import INT
from core.index.whoosh_pin import LENGTHS_COLUMN, WHOOSH3_HEADER_MAGIC, W3TermsReader, length_field


class UnknownLayout(Exception):
    """A segment not laid out as whoosh-reloaded 2.7.5 writes it: the caller asks Whoosh's public API."""


def blocks(raw: bytes) -> Iterator[tuple[int, Any, Any, Any]]:
    """Each block of a term's posting list as written: (count, docnum deltas, weights, values)."""
    if raw[:4] != WHOOSH3_HEADER_MAGIC:
        raise ValueError("not a W3 posting list")
    stream = io.BytesIO(raw)
    pos = 4
    end = len(raw)
    while pos < end:
        size = INT.unpack_from(raw, pos)[0]
        stop = pos + 4 + abs(size)
        stream.seek(pos + 4)
        count, _, _, comp, _, _ = pickle.load(stream)  # the block header
        data = raw[stream.tell() : stop]
        deltas, weights, values = pickle.loads(zlib.decompress(data) if comp else data)
        yield count, deltas, weights, values
        if size < 0:  # a term's last block
            break
        pos = stop


def _weights(weights: Any, count: int) -> Sequence[float]:
    """A block's weights as W3LeafMatcher expands them (all 1.0 and all equal are stored short)."""
    if weights is None:
        return [1.0] * count
    if isinstance(weights, float):
        return [weights] * count
    return weights


def decode_postings(raw: bytes, fixed: int | None) -> Iterator[tuple[int, float, Any]]:
    """(docnum, weight, value) of each posting in a term's blocks; `fixed` is the format's value size."""
    for count, deltas, weights, values in blocks(raw):
        if fixed == 0:
            values = [None] * count
        elif fixed is not None and fixed > 0:
            values = [values[i : i + fixed] for i in range(0, len(values), fixed)]
        yield from zip(accumulate(deltas), _weights(weights, count), values, strict=False)


def posting_bytes(terms: Any, info: Any) -> bytes:
    """The bytes of a (not inlined) term's posting list, from its term info's extent."""
    offset, length = info.extent()
    if isinstance(length, tuple):  # W3TermInfo.from_bytes keeps struct.unpack's tuple
        length = length[0]
    return bytes(terms._postfile.get(offset, length))


def term_postings(reader: Any, field: str, text: str) -> tuple[list[int], list[float]] | None:
    """(document numbers, weights) of one term in one segment, deleted documents included
    (the scorers mask them): what both BM25F scorers read. None: the segment lacks the term."""
    if (field, text) not in reader:
        return None
    terms = getattr(reader, "_terms", None)
    info = reader.term_info(field, text)
    ids: list[int] = []
    weights: list[float] = []
    if not isinstance(terms, W3TermsReader):  # the public, slower way
        matcher = reader.postings(field, text)
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
    elif info.is_inlined():
        inlined_ids, inlined_weights, _ = info.inlined_postings()
        ids.extend(inlined_ids)
        weights.extend(inlined_weights)
    else:
        for count, deltas, block_weights, _ in blocks(posting_bytes(terms, info)):
            ids.extend(accumulate(deltas))
            weights.extend(_weights(block_weights, count))
    return ids, weights


def length_codes(reader: Any, field: str) -> bytes | None:
    """Each document's length byte for `field` (documents past the end have 0), or None where the
    segment keeps no lengths for it (every length is then 1, as `doc_field_length(d, f, 1)` says).

    One byte string instead of a call per document: that cost ~250 ms per field on 30k chunks.
    Raises `UnknownLayout` where the column is not the fixed one-byte column 2.7.5 writes.
    """
    try:
        column = reader._perdoc._cached_reader(length_field(field), LENGTHS_COLUMN)
        if column is None:
            return None
        if column._fixedlen != 1:
            raise UnknownLayout(field)
        stored = min(column._count, reader.doc_count_all())
        return bytes(column._dbfile.get(column._basepos, stored)) if stored else b""
    except (AttributeError, TypeError, ValueError) as exc:
        raise UnknownLayout(field) from exc
