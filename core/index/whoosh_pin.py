"""The pinned Whoosh, and every private part of it Cairn's fast index path reaches into.

Cairn writes and reads Whoosh's W3 segment format itself (`core.index.w3_postings`,
`fast_writer`, `segment_merge`, the BM25F scorers), relying on the layout and the private
classes of one release: whoosh-reloaded 2.7.5. They are imported here and nowhere else
(`tests/core/index/test_whoosh_pin.py` holds the rest of `core` to Whoosh's public
modules), and the version is checked at import: another Whoosh would not fail loudly but
write segments it reads differently, so it is refused with the version Cairn expects.
"""

from __future__ import annotations

import functools
import os
import struct
from array import array
from itertools import accumulate
from typing import Any

import whoosh

from core.base.lean_import import class_once_loaded, import_lean, module_on_first_use, on_first_call

PINNED = (2, 7, 5)
DISTRIBUTION = "whoosh-reloaded"


class WhooshVersionError(ImportError):
    """The installed Whoosh is not the release Cairn's index format code was written for."""


def check_version(found: object) -> None:
    """Raise `WhooshVersionError` unless `found` (Whoosh's `__version__` tuple) is the pinned release."""
    if (tuple(found) if isinstance(found, (tuple, list)) else None) != PINNED:
        expected = ".".join(map(str, PINNED))
        raise WhooshVersionError(
            f"Cairn needs {DISTRIBUTION}=={expected} (its index code reads and writes that release's "
            f"segment format), but Whoosh {_spelled(found)} is installed: "
            f"pip install '{DISTRIBUTION}=={expected}'"
        )


def _spelled(found: object) -> str:
    if isinstance(found, (tuple, list)):
        return ".".join(map(str, found))
    return repr(found)


check_version(getattr(whoosh, "__version__", None))


def _urlretrieve(*args: Any, **kwargs: Any) -> Any:
    """`whoosh.compat`'s download helper, importing `urllib.request` only if ever called (see `import_lean`)."""
    from urllib.request import urlretrieve

    return urlretrieve(*args, **kwargs)


def _html_escape(s: str, quote: bool = True) -> str:
    """`whoosh.compat.htmlescape` (`html.escape`, for its highlighter's HTML output only), importing
    `html` only if ever called: `html.entities`' tables cost every cold index and search ~1.4 ms."""
    from html import escape

    return escape(s, quote)


def _variations(word: str) -> Any:
    """`whoosh.query.terms`' English word forms (the `Variations` query), compiled only if ever asked for.

    `whoosh.lang.morph_en` compiles ~100 regular expressions at import (~5 ms of every
    cold search), for a query kind Cairn never builds.
    """
    from whoosh.lang.morph_en import variations

    return variations(word)


def _builtin_digests() -> dict[str, dict[str, Any]]:
    """A `hashlib` stand-in of CPython's own MD5 and SHA-1, where the build has them.

    Whoosh's term tables hash keys with `hashlib.md5` (`whoosh.filedb.filetables`); `hashlib`
    loads OpenSSL's libcrypto for it (~2.5 ms of every cold index and search). The built-in
    modules compute the same digests, and faster on a term's few bytes.
    """
    try:
        from _md5 import md5
        from _sha1 import sha1
    except ImportError:  # a build without them: Whoosh imports hashlib as it is
        return {}
    return {"hashlib": module_on_first_use("hashlib", md5=md5, sha1=sha1)}


_STAND_INS: dict[str, dict[str, Any]] = {
    "urllib.request": {"urlretrieve": _urlretrieve},
    "html": {"escape": _html_escape},
    "cached_property": {"cached_property": functools.cached_property},
    "whoosh.lang.morph_en": {"variations": _variations},
    # `whoosh.fields`' DATETIME fields (Cairn's schema has none) convert with these two: their module imports
    # `calendar` and with it `locale` (~0.9 ms of every cold index and search, nothing else of theirs used).
    "whoosh.util.times": module_on_first_use(
        "whoosh.util.times", **{name: on_first_call("whoosh.util.times", name) for name in ("datetime_to_long", "long_to_datetime")}
    ),
    # `whoosh.fields` makes and tests Decimals for NUMERIC fields declared with decimal places,
    # which Cairn's schema never declares (`keyword_schema`); `decimal` costs every cold run ~0.8 ms.
    "decimal": module_on_first_use("decimal", Decimal=class_once_loaded("decimal", "Decimal")),
    **_builtin_digests(),
}
import_lean(_STAND_INS, "whoosh.compat", "whoosh.reading", "whoosh.codec.whoosh3")


def lean_query() -> None:
    """Import Whoosh's query package (and so its searching side) lean, before a search needs it.

    Only a search builds queries: a cold `cairn index` writes without them (~4 ms of imports
    it no longer pays). Call this before importing `whoosh.query`, `whoosh.searching` or
    `whoosh.scoring`, or opening a searcher (Whoosh's searching imports its query package).
    """
    import_lean(_STAND_INS, "whoosh.query")


# The imports below are the private surface; the version check above guards them.
from whoosh import columns, formats  # noqa: E402
from whoosh.codec.whoosh3 import (  # noqa: E402
    LENGTHS_COLUMN,
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3FieldWriter,
    W3PerDocWriter,
    W3Segment,
    W3TermsReader,
    _lenfield,
)
from whoosh.compat import dumps  # noqa: E402
from whoosh.filedb import filetables  # noqa: E402
from whoosh.filedb.filestore import FileStorage  # noqa: E402
from whoosh.filedb.filetables import md5_hash  # noqa: E402
from whoosh.filedb.structfile import BufferFile, StructFile  # noqa: E402
from whoosh.reading import SegmentReader  # noqa: E402
from whoosh.system import pack_uint  # noqa: E402
from whoosh.util.numeric import _length_byte_cache, byte_to_length, length_to_byte  # noqa: E402
from whoosh.writing import PostingPool, SegmentWriter  # noqa: E402

LENGTH_OF_BYTE: tuple[float, ...] = tuple(_length_byte_cache)  # a length byte's decoded field length
WHOOSH_READ_OFFSETS = columns.VarBytesColumn.Reader._read_offsets_and_lengths  # Whoosh's own, kept for the tests


def _read_offsets_and_lengths(self: Any) -> None:
    """`whoosh.columns.VarBytesColumn.Reader._read_offsets_and_lengths`, the offsets summed at C speed.

    A column written without its offsets (the stored fields' column is) had them rebuilt with
    one Python `append` per document whenever a searcher first read it: every segment's stored
    column, on every cold `cairn search` (~10 ms at 30k chunks, linear in the vault's size).
    `itertools.accumulate` gives the same array.
    """
    dbfile, doccount = self._dbfile, self._doccount
    lastbyte = self._basepos + self._length - 1
    lens_code = chr(dbfile.get_byte(lastbyte))
    offsets = None
    if lens_code == "X":
        self.had_stored_offsets = True
        lens_code = chr(dbfile.get_byte(lastbyte - 2))
        offsets_code = chr(dbfile.get_byte(lastbyte - 1))
        offsetstart = (lastbyte - 2) - doccount * struct.calcsize(offsets_code)
        offsets = dbfile.get_array(offsetstart, offsets_code, doccount)
        lastbyte = offsetstart
    lengths = dbfile.get_array(lastbyte - struct.calcsize(lens_code) * doccount, lens_code, doccount)
    if offsets is None:
        offsets = array("L", accumulate(lengths, initial=0))
        offsets.pop()  # the total after the last document
    self._offsets = offsets
    self._lengths = lengths


columns.VarBytesColumn.Reader._read_offsets_and_lengths = _read_offsets_and_lengths


def _hash_reader_init(self: Any, dbfile: Any, length: int | None = None, magic: bytes = b"HSH3", startoffset: int = 0) -> None:
    """`whoosh.filedb.filetables.HashReader.__init__`, its directory of 256 hash tables read at once.

    Whoosh read it one 12-byte entry at a time: 256 reads for each segment's term table, on
    every cold `cairn search` (2,560 at ten segments). Everything else is Whoosh's own.
    """
    self.dbfile, self.startoffset, self.is_closed = dbfile, startoffset, False
    if length is None:
        dbfile.seek(0, os.SEEK_END)
        length = dbfile.tell() - startoffset
    dbfile.seek(startoffset)
    filemagic = dbfile.read(4)
    if filemagic != magic:
        raise filetables.FileFormatError(f"Unknown file header {filemagic!r}")
    self.hashtype = dbfile.read_byte()
    self.hashfn = filetables._hash_functions[self.hashtype]
    dbfile.read_int()  # two ints of unused expansion room
    dbfile.read_int()
    self.startofdata = dbfile.tell()
    exptr = startoffset + length - filetables._INT_SIZE
    expos = exptr - dbfile.get_int(exptr)
    dbfile.seek(expos)
    self._read_extras()
    dbfile.seek(expos - filetables._directory_size)
    self.tables = list(filetables._dir_entry.iter_unpack(dbfile.read(filetables._directory_size)))
    self.endofdata = self.tables[0][0]


filetables.HashReader.__init__ = _hash_reader_init

__all__ = [
    "LENGTHS_COLUMN",
    "LENGTH_OF_BYTE",
    "WHOOSH3_HEADER_MAGIC",
    "BufferFile",
    "FileStorage",
    "PostingPool",
    "SegmentReader",
    "SegmentWriter",
    "StructFile",
    "W3Codec",
    "W3FieldWriter",
    "W3PerDocWriter",
    "W3Segment",
    "W3TermsReader",
    "byte_to_length",
    "columns",
    "dumps",
    "formats",
    "length_field",
    "length_to_byte",
    "md5_hash",
    "pack_uint",
]


def length_field(fieldname: str) -> str:
    """The name of the column that holds a field's length bytes."""
    return str(_lenfield(fieldname))
