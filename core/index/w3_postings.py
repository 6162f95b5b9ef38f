"""Whoosh's W3 posting format, written and read: the one module that knows its bytes.

Writing: Whoosh writes a term through five objects (W3FieldWriter.start_term, the
postings writer's add_posting per posting, _write_block, W3TermInfo.to_bytes and the
term table's add), each asking the file for its position: on a cold index of tldr that
was ~70 % of a commit's time for 85k terms and 390k postings. This module makes the same
bytes directly: the same block tuples (pickled with a newer protocol, see
`BLOCK_PROTOCOL`), the same block headers, the same term info structs and the same hashed
term table, into a buffer written a megabyte at a time. A test holds the postings equal to
Whoosh's, and with protocol 2 the files equal byte for byte.

Reading: `core.index.w3_read`.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from itertools import groupby, starmap
from operator import itemgetter, sub
from struct import Struct
from types import MethodType
from typing import Any

from core.index.whoosh_pin import (
    WHOOSH3_HEADER_MAGIC,
    dumps,
    length_to_byte,
    md5_hash,
)

Rows = list[Any]  # a term's postings flat, docnum, weight, value, docnum...: ascending docnums, no tuple per posting
Posting = tuple[str, bytes, int, float, bytes | None]  # (field, term bytes, docnum, weight, value): Whoosh's pool item
try:  # CPython's own MD5: twice as fast as OpenSSL's through `hashlib` on a term's few bytes
    from _md5 import md5 as md5_digest
except ImportError:  # a build without it
    from hashlib import md5

    md5_digest = partial(md5, usedforsecurity=False)
from_bytes = int.from_bytes
FLUSH_BYTES = 1 << 20  # buffered output written to the file past this size
#: Pickle protocol of a block's (ids, weights, values) tuple. Whoosh uses 2, which in Python 3
#: spells every bytes value as a call to `_codecs.encode` on a latin-1 string: a full block of
#: positions took 66 µs to pickle and 59 µs to unpickle (at every query that reads it) against
#: 8 and 9 µs with protocol 4, in 40 % fewer bytes. Whoosh's reader unpickles any protocol.
BLOCK_PROTOCOL = 4

_TERMINFO = Struct("!BfIBBfIIqi")  # W3TermInfo._struct, then the extent: pack_long(offset) + pack_int(length)
INT = Struct("!i")  # StructFile.write_int: a block's length, negative for a term's last block
_KEYVAL_LENGTHS = Struct("!ii")  # filetables._lengths: before each key/value pair of the term table
_POINTER = Struct("!Iq")  # filetables._pointer: a hash table slot (hash, position of the key)
_FIELD_ID = Struct("!H")  # pack_ushort: the field's number, before the term's bytes in a term table key


def supported(fieldwriter: Any) -> bool:
    """Whether `write_stream` knows this field writer's layout (W3, docnum ids, no inlining)."""
    codec = fieldwriter._codec
    tindex = fieldwriter._tindex
    return (
        getattr(codec, "_inlinelimit", None) == 1  # W3 never inlines then (and its inlining path is broken)
        and isinstance(getattr(codec, "_blocklimit", None), int)
        and tindex.hashfn is md5_hash
        and not fieldwriter._fieldmap
        and not tindex.buckets[0]
    )


class _Lengths:
    """A field's length byte and quantised length per document, looked up once per docnum."""

    def __init__(self, fieldname: str, known: dict[int, int], fallback: Any) -> None:
        self.fieldname = fieldname
        self.known = known
        self.fallback = fallback  # (docnum, fieldname) -> length, for a merged segment's document

    def of(self, docnum: int) -> int:
        found = self.known.get(docnum)
        if found is None:  # a merged segment's document: read once, then remembered
            found = self.known[docnum] = self.fallback(docnum, self.fieldname)
        return found

    def many(self, docnums: Sequence[int]) -> list[int]:
        try:  # every new document's length is known: one C-level pass, no test per length
            return list(map(self.known.__getitem__, docnums))
        except KeyError:  # a merged segment's documents
            return [self.of(d) for d in docnums]


def write_pool(fieldwriter: Any, schema: Any, postings: Iterator[Posting], lengths: dict[str, dict[int, int]], fallback: Any) -> None:
    """`write_stream` for postings that arrive one by one in (field, term, docnum) order: Whoosh's spilling pool."""
    grouped = ((fieldname, tbytes, [x for item in group for x in item[2:]]) for (fieldname, tbytes), group in groupby(postings, key=itemgetter(0, 1)))
    write_stream(fieldwriter, schema, grouped, lengths, fallback)


def write_stream(fieldwriter: Any, schema: Any, terms: Iterable[tuple[str, bytes, Rows]], lengths: dict[str, dict[int, int]], fallback: Any) -> None:  # noqa: C901, PLR0915 - the per-term hot loop of a build: kept in one function so its state stays in locals
    """Write every (field, term)'s postings and term info, as `FieldWriter.add_postings` would, over
    (field, term bytes, postings) in that order.

    `lengths` holds, by field, the quantised length of each new document's field (absent
    fields have none); `fallback(docnum, fieldname)` answers for documents merged in.
    """
    codec = fieldwriter._codec
    limit: int = codec._blocklimit
    comp: int = codec._compression
    postfile = fieldwriter._postfile
    tindex = fieldwriter._tindex
    tfile = tindex.dbfile
    fieldmap = fieldwriter._fieldmap
    buckets = tindex.buckets
    positions: list[int] = []  # of each key: `OrderedHashWriter.index`, filled in one go at the end
    index_append = positions.append
    out = bytearray()
    base = postfile.tell()
    tout = bytearray()
    tbase = tfile.tell()
    to_byte = _ByteOf()
    f32: dict[float, float] = {}  # a weight as float32 holds it
    lastkey = b""
    fixed: int | None = None
    field_lengths: _Lengths | None = None
    prefix = b""
    lastfield = None
    known_get = None
    known_item = None
    for fieldname, tbytes, rows in terms:
        if fieldname != lastfield:
            field = schema[fieldname]
            fieldmap[fieldname] = len(fieldmap)
            prefix = _FIELD_ID.pack(fieldmap[fieldname])
            fixed = field.format.fixed_value_size()
            field_lengths = _Lengths(fieldname, lengths.setdefault(fieldname, {}), fallback) if field.scorable else None
            known_get = field_lengths.known.get if field_lengths is not None else None
            known_item = field_lengths.known.__getitem__ if field_lengths is not None else None
            lastfield = fieldname
        start = base + len(out)
        n = len(rows) // 3
        if n == 1:  # most terms: one posting, one block, no loops
            docnum, weight, vbytes = rows
            rounded = f32.get(weight)
            if rounded is None:
                rounded = f32[weight] = array("f", [weight])[0]
            length = known_get(docnum) if known_get is not None else 0
            if length is None:
                length = field_lengths.of(docnum)  # type: ignore[union-attr]
            maxbyte = to_byte[length]
            minbyte = maxbyte if length else 0
            total_weight: float = rounded
            term_maxweight: float = weight if weight > 0 else 0
            if fixed is None or fixed < 0:
                mini_values: Any = (vbytes,) if vbytes else ()
            else:
                mini_values = None if fixed == 0 else vbytes or b""
            data = dumps(((docnum,), None if rounded == 1.0 else rounded, mini_values), BLOCK_PROTOCOL)
            if comp:
                data = zlib.compress(data, comp)
            info = dumps((1, docnum, term_maxweight, comp, minbyte, maxbyte), 2)
            out += WHOOSH3_HEADER_MAGIC
            out += INT.pack(-len(info) - len(data))
            out += info
            out += data
        elif n <= limit:  # one block (all but the commonest terms): `_blocks`' loop, inlined
            ids = rows[::3]
            raw_weights = rows[1::3]
            weight = raw_weights[0]
            if raw_weights.count(weight) == n:  # `_block_weights`' common case
                rounded = f32.get(weight)
                if rounded is None:
                    rounded = f32[weight] = array("f", [weight])[0]
                total_weight = rounded * n + 0.0  # `_blocks` adds it to 0: -0.0 becomes 0.0 there too
                term_maxweight = weight if weight > 0 else 0
                mini_weights: Any = None if rounded == 1.0 else rounded
            else:
                total_weight, term_maxweight, mini_weights = _block_weights(raw_weights, n)
                total_weight += 0.0
            if known_get is not None:
                try:
                    lens = list(map(known_item, ids))  # type: ignore[arg-type]
                except KeyError:  # a merged segment's documents
                    lens = field_lengths.many(ids)  # type: ignore[union-attr]
                low: int | None = min(lens)
                high = max(lens)
                if not low:  # a length of 0 is not a length (see `_blocks`)
                    lens = list(filter(None, lens))
                    low = min(lens) if lens else None
            else:
                low, high = None, 0
            minbyte = to_byte[low]
            maxbyte = to_byte[high]
            if fixed is None or fixed < 0:
                mini_values = tuple(filter(None, rows[2::3]))
            elif fixed == 0:
                mini_values = None
            else:
                mini_values = b"".join(filter(None, rows[2::3]))
            data = dumps(((ids[0], *map(sub, ids[1:], ids)), mini_weights, mini_values), BLOCK_PROTOCOL)
            if comp:
                data = zlib.compress(data, comp)
            info = dumps((n, ids[-1], term_maxweight, comp, minbyte, maxbyte), 2)
            out += WHOOSH3_HEADER_MAGIC
            out += INT.pack(-len(info) - len(data))
            out += info
            out += data
        else:
            out += WHOOSH3_HEADER_MAGIC
            total_weight, term_maxweight, minbyte, maxbyte = _blocks(out, rows, limit, comp, fixed, field_lengths, to_byte)
        # The term table row: W3TermInfo.to_bytes, then OrderedHashWriter.add.
        tkey = prefix + tbytes
        if tkey <= lastkey:
            raise ValueError(f"Keys must increase: {lastkey!r}..{tkey!r}")
        lastkey = tkey
        value = _TERMINFO.pack(0, total_weight, n, minbyte, maxbyte, term_maxweight, rows[0], rows[-3], start, base + len(out) - start)
        pos = tbase + len(tout)
        index_append(pos)
        tout += _KEYVAL_LENGTHS.pack(len(tkey), len(value))
        tout += tkey
        tout += value
        h = from_bytes(md5_digest(tkey).digest()[-4:], "big")  # md5_hash, without the hex round trip
        buckets[h & 255].append((h, pos))
        if len(out) > FLUSH_BYTES:
            postfile.write(out)
            base += len(out)
            out = bytearray()
        if len(tout) > FLUSH_BYTES:
            tfile.write(tout)
            tbase += len(tout)
            tout = bytearray()
    postfile.write(out)
    tfile.write(tout)
    _extend_index(tindex.index, positions)
    tindex.lastkey = lastkey
    tindex._write_hashes = MethodType(_write_hashes, tindex)  # at close: the same tables, a write per table


def _extend_index(index: Any, positions: list[int]) -> None:
    """Whoosh's `GrowableArray.extend`, in one C call: its type widened once, for the last (largest) position."""
    if not positions:
        return
    if isinstance(index.array, array):
        try:
            array(index.array.typecode, positions[-1:])
        except OverflowError:
            index._retype(positions[-1])
    index.array.extend(positions)


def _write_hashes(tindex: Any) -> None:
    """HashWriter._write_hashes, with the 256 tables packed and written in one go (not a write per slot)."""
    dbfile = tindex.dbfile
    null = (0, 0)
    pos = dbfile.tell()
    directory = tindex.directory
    tables: list[bytes] = []
    for entries in tindex.buckets:
        numslots = 2 * len(entries)
        directory.append((pos, numslots))
        if not numslots:
            continue
        table: list[tuple[int, int]] = [null] * numslots
        for entry in entries:
            slot = (entry[0] >> 8) % numslots
            while table[slot] is not null:  # linear probing, as Whoosh's
                slot = (slot + 1) % numslots
            table[slot] = entry
        tables.append(b"".join(starmap(_POINTER.pack, table)))
        pos += numslots * _POINTER.size
    dbfile.write(b"".join(tables))


def _blocks(
    out: bytearray, rows: Rows, limit: int, comp: int, fixed: int | None, field_lengths: _Lengths | None, to_byte: _ByteOf
) -> tuple[float, float, int, int]:
    """Append a term's blocks of `limit` postings to `out`, as W3PostingsWriter writes them.

    Returns the term info's statistics as W3TermInfo.add_block keeps them: total weight,
    maximum weight, and the minimum and maximum length bytes.
    """
    total_weight: float = 0
    minlength: int | None = None
    maxlength = 0
    term_maxweight: float = 0
    n = len(rows) // 3
    for first in range(0, n, limit):
        start = first * 3
        end = min(first + limit, n) * 3
        ids = rows[start:end:3]
        raw_weights = rows[start + 1 : end : 3]
        raw_values = rows[start + 2 : end : 3]
        count = len(ids)
        block_weight, maxweight, mini_weights = _block_weights(raw_weights, count)
        bmin: int | None
        if field_lengths is not None:
            lens = field_lengths.many(ids)
            bmin = min(lens)
            bmax = max(lens)
            if not bmin:  # a length of 0 (a merged document's, read back) is not a length: Whoosh skips it
                lens = list(filter(None, lens))
                bmin = min(lens) if lens else None
        else:
            bmin, bmax = None, 0
        total_weight += block_weight
        if minlength is None:
            minlength = bmin
        elif bmin is not None:
            minlength = min(minlength, bmin)
        maxlength = max(maxlength, bmax)
        term_maxweight = max(term_maxweight, maxweight)
        # _mini_ids, _mini_weights and _mini_values, pickled as _write_block does.
        if fixed is None or fixed < 0:
            mini_values: Any = tuple(filter(None, raw_values))
        elif fixed == 0:
            mini_values = None
        else:
            mini_values = b"".join(filter(None, raw_values))
        deltas = (ids[0], *map(sub, ids[1:], ids))
        data = dumps((deltas, mini_weights, mini_values), BLOCK_PROTOCOL)
        if comp:
            data = zlib.compress(data, comp)
        info = dumps((len(ids), ids[-1], maxweight, comp, to_byte[bmin], to_byte[bmax]), 2)
        size = len(info) + len(data)
        out += INT.pack(-size if first + limit >= n else size)
        out += info
        out += data
    return total_weight, term_maxweight, to_byte[minlength], to_byte[maxlength]


def _block_weights(raw_weights: Rows, count: int) -> tuple[float, float, Any]:
    """A block's summed float32 weights, its maximum weight and its weights as `_write_block` pickles them.

    Most blocks hold one weight (a term once in each chunk): rounded once, and summed as a product,
    which equals the float32 values added one by one (j times a float32 value, j <= 128 postings, fits
    a double's 53-bit significand exactly, so no partial sum rounds).
    """
    w = raw_weights[0]
    if raw_weights.count(w) == count:
        rounded = array("f", (w,))[0]
        return rounded * count, (w if w > 0 else 0), (None if rounded == 1.0 else rounded)
    weights = array("f", raw_weights)
    raw_max = max(raw_weights)  # add_posting compares the weights before float32 rounding
    w0 = weights[0]
    if weights.count(1.0) == count:
        mini_weights: Any = None
    elif weights.count(w0) == count:
        mini_weights = w0
    else:
        mini_weights = tuple(weights)
    return sum(weights), (raw_max if raw_max > 0 else 0), mini_weights


class _ByteOf(dict[int | None, int]):
    """length_to_byte, remembered: a dict lookup in C per block instead of a bisect (or a call)."""

    def __missing__(self, length: int | None) -> int:
        found = self[length] = length_to_byte(length)
        return found
