"""Posting lists and term infos of a new segment, written in one loop as Whoosh's W3 codec writes them.

Whoosh writes a term through five objects (W3FieldWriter.start_term, the postings
writer's add_posting per posting, _write_block, W3TermInfo.to_bytes and the term
table's add), each asking the file for its position: on a cold index of tldr that
was ~70 % of a commit's time for 85k terms and 390k postings. This module makes
the same bytes directly: the same pickled block tuples, the same block headers,
the same term info structs and the same hashed term table, into a buffer written
a megabyte at a time. A test holds the files equal, byte for byte, to Whoosh's.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Mapping
from hashlib import md5
from struct import Struct
from typing import Any

from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC
from whoosh.compat import dumps
from whoosh.filedb.filetables import md5_hash
from whoosh.util.numeric import length_to_byte

Rows = list[tuple[int, float, bytes | None]]  # (docnum, weight, value) in ascending docnum order
FLUSH_BYTES = 1 << 20  # buffered output written to the file past this size

_TERMINFO = Struct("!BfIBBfIIqi")  # W3TermInfo._struct, then the extent: pack_long(offset) + pack_int(length)
_INT = Struct("!i")  # StructFile.write_int: a block's length, negative for a term's last block
_KEYVAL_LENGTHS = Struct("!ii")  # filetables._lengths: before each key/value pair of the term table
_FIELD_ID = Struct("!H")  # pack_ushort: the field's number, before the term's bytes in a term table key


def supported(fieldwriter: Any) -> bool:
    """Whether `write_terms` knows this field writer's layout (W3, docnum ids, no inlining)."""
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

    def __init__(self, fieldname: str, known: Mapping[int, int], fallback: Any) -> None:
        self.fieldname = fieldname
        self.known = known
        self.fallback = fallback  # (docnum, fieldname) -> length, for a merged segment's document

    def of(self, docnum: int) -> int:
        found = self.known.get(docnum)
        return found if found is not None else self.fallback(docnum, self.fieldname)


def write_terms(
    fieldwriter: Any,
    schema: Any,
    postings: Mapping[tuple[str, bytes], Rows],
    lengths: Mapping[str, Mapping[int, int]],
    fallback: Any,
) -> None:
    """Write every (field, term)'s postings and term info, as `FieldWriter.add_postings` would.

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
    index_append = tindex.index.append
    out = bytearray()
    base = postfile.tell()
    tout = bytearray()
    tbase = tfile.tell()
    to_byte: dict[int | None, int] = {}
    lastkey = b""
    lastfield = None
    scorable = False
    fixed: int | None = None
    field_lengths: _Lengths | None = None
    prefix = b""
    for key in sorted(postings):
        fieldname, tbytes = key
        if fieldname != lastfield:
            field = schema[fieldname]
            fieldmap[fieldname] = len(fieldmap)
            prefix = _FIELD_ID.pack(fieldmap[fieldname])
            fixed = field.format.fixed_value_size()
            scorable = field.scorable
            field_lengths = _Lengths(fieldname, lengths.get(fieldname, {}), fallback) if scorable else None
            lastfield = fieldname
        rows = postings[key]
        start = base + len(out)
        out += WHOOSH3_HEADER_MAGIC
        total_weight: float = 0
        minlength: int | None = None
        maxlength = 0
        term_maxweight: float = 0
        n = len(rows)
        for first in range(0, n, limit):
            block = rows[first : first + limit] if n > limit else rows
            ids = [d for d, _, _ in block]
            weights = array("f", [w for _, w, _ in block])
            raw_max = max(w for _, w, _ in block)  # add_posting compares the weights before float32 rounding
            maxweight = raw_max if raw_max > 0 else 0
            if field_lengths is not None:
                lens = [x for x in map(field_lengths.of, ids) if x]
                bmin = min(lens) if lens else None
                bmax = max(lens) if lens else 0
            else:
                bmin, bmax = None, 0
            # The terminfo's running statistics, as W3TermInfo.add_block keeps them.
            total_weight += sum(weights)
            if minlength is None:
                minlength = bmin
            elif bmin is not None:
                minlength = min(minlength, bmin)
            maxlength = max(maxlength, bmax)
            term_maxweight = max(term_maxweight, maxweight)
            # The block: W3PostingsWriter._write_block with _mini_ids, _mini_weights, _mini_values.
            w0 = weights[0]
            if all(w == 1.0 for w in weights):
                mini_weights: Any = None
            elif all(w == w0 for w in weights):
                mini_weights = w0
            else:
                mini_weights = tuple(weights)
            values = [v for _, _, v in block if v]
            if fixed is None or fixed < 0:
                mini_values: Any = tuple(values)
            elif fixed == 0:
                mini_values = None
            else:
                mini_values = b"".join(values)
            deltas = tuple(b - a for a, b in zip([0, *ids], ids, strict=False))
            data = dumps((deltas, mini_weights, mini_values), 2)
            if comp:
                data = zlib.compress(data, comp)
            bmin_byte = to_byte.get(bmin)
            if bmin_byte is None:
                bmin_byte = to_byte[bmin] = length_to_byte(bmin)
            bmax_byte = to_byte.get(bmax)
            if bmax_byte is None:
                bmax_byte = to_byte[bmax] = length_to_byte(bmax)
            info = dumps((len(ids), ids[-1], maxweight, comp, bmin_byte, bmax_byte), 2)
            size = len(info) + len(data)
            out += _INT.pack(-size if first + limit >= n else size)
            out += info
            out += data
        # The term table row: W3TermInfo.to_bytes, then OrderedHashWriter.add.
        tkey = prefix + tbytes
        if tkey <= lastkey:
            raise ValueError(f"Keys must increase: {lastkey!r}..{tkey!r}")
        lastkey = tkey
        minbyte = 0 if minlength is None else to_byte.get(minlength, None)
        if minbyte is None:
            minbyte = to_byte[minlength] = length_to_byte(minlength)  # type: ignore[index]
        maxbyte = to_byte.get(maxlength)
        if maxbyte is None:
            maxbyte = to_byte[maxlength] = length_to_byte(maxlength)
        value = _TERMINFO.pack(0, total_weight, n, minbyte, maxbyte, term_maxweight, rows[0][0], rows[-1][0], start, base + len(out) - start)
        pos = tbase + len(tout)
        index_append(pos)
        tout += _KEYVAL_LENGTHS.pack(len(tkey), len(value))
        tout += tkey
        tout += value
        h = int.from_bytes(md5(tkey, usedforsecurity=False).digest()[-4:], "big")  # md5_hash, without the hex round trip
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
    tindex.lastkey = lastkey
