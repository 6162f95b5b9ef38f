"""A note's chunks filed into a segment together: the segment one `add_document` per chunk writes.

Split from `core.index.fast_writer`, whose `add_note` this is. Most of a chunk's indexed
fields are its note's: title, path, folders, tags, aliases, names, dates, type, version,
language, the same value in every chunk. Filed a chunk at a time, each of them cost a memo
lookup, a filing call and a length byte per chunk (about 12 of a chunk's 15 indexed fields).
Here each run of consecutive chunks that share a field's value (in the same language, where
the field's terms depend on it) is analysed once, its postings are filed for the whole run
in one `extend` per term (`TermPool.add_run`), and its length bytes go in one loop. A long
section's chunks share their heading path the same way.

Only the order of the work changes, not what is written: each term's postings still arrive in
ascending document order (runs are consecutive documents, fields are filed apart), each length
column gets its documents in order, and each document's stored fields are put in Whoosh's
field order before `finish_doc` pickles them. A run is made only of values whose analysed
items the analyser remembers anyway (`FieldAnalyser.shares`): the postings then hold the very
objects a chunk-at-a-time writer files, and the pickled blocks keep their bytes.
`tests/core/index/test_fast_writer.py` holds the segment equal to Whoosh's own writer's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from itertools import accumulate, islice, repeat
from operator import eq
from typing import Any, NamedTuple

from core.index.field_analysis import FieldItems
from core.index.term_pool import TermPool
from core.index.whoosh_pin import LENGTHS_COLUMN, byte_to_length, columns, dumps, length_to_byte


class Layout(NamedTuple):
    """A chunk key set's fields: all in Whoosh's order (sorted), and those stored and with a column."""

    names: list[str]
    stored: tuple[str, ...]
    columns: tuple[str, ...]


Run = tuple[str, int, int, FieldItems]  # (field, first docnum, documents, the analysed value they share)


class _Quantise(dict[int, tuple[int, int]]):
    """A field length -> (its length byte, the length that byte stands for): two Python calls of
    Whoosh's, remembered (a chunk has ~4 scorable fields, and lengths recur)."""

    def __missing__(self, length: int) -> tuple[int, int]:
        lb = length_to_byte(length)
        found = self[length] = (lb, byte_to_length(lb))
        return found


QUANTISED = _Quantise()
#: Fewer chunks than this go in one `add_document` each: a run's set-up costs more than it saves on two
#: (callgrind over obsidian-tasks-demo's notes: 1,511 M instructions filing 2-chunk notes together, 1,507 M apart).
SHARED_ROWS = 3
NUMERIC_WRITER = columns.NumericColumn.Writer  # a length column's writer (`LENGTHS_COLUMN`: one byte, default 0)
PICKLE_WRITER = columns.PickleColumn.Writer  # the stored fields' column writer, over a `COMPRESSED_WRITER`
COMPRESSED_WRITER = columns.CompressedBytesColumn.Writer


def value_runs(values: Sequence[Any], langs: Sequence[str], by_language: bool, shares: Callable[[Any], bool]) -> list[tuple[int, int]]:
    """(first row, rows) of each run of consecutive rows with an equal value (and, when `by_language`,
    the same language) that `shares` lets be one analysed value for all (equal values are one to the
    analyser's memo too); a row without the field (None) is in no run."""
    found: list[tuple[int, int]] = []
    end = len(values)
    i = 0
    while i < end:
        value = values[i]
        if value is None:
            i += 1
            continue
        j = i + 1
        if j < end and values[j] == value and shares(value):
            lang = langs[i]
            while j < end and values[j] == value and (not by_language or langs[j] == lang):
                j += 1
        found.append((i, j - i))
        i = j
    return found


def file_note(writer: Any, rows: Sequence[dict[str, Any]], langs: Sequence[str]) -> None:
    """`rows` (a note's chunks' fields) as the next documents of `writer`, a `FastSegmentWriter` (typed
    `Any` here: that module imports this one); see the module docstring.

    Every row is checked and every value analysed before anything is filed, so a bad value
    leaves the segment as it was; a failure while filing leaves the writer to be cancelled.
    """
    if len(rows) < SHARED_ROWS:
        for fields, lang in zip(rows, langs, strict=True):
            writer.add_document(**fields, _lang=lang)
        return
    first = writer.docnum
    layouts = list(map(writer.layout, rows))
    distinct = {id(layout): layout.names for layout in layouts}  # a note's first chunk may have more fields (its `meta`)
    names = layouts[0].names if len(distinct) == 1 else sorted(set().union(*distinct.values()))
    runs = _analysed_runs(writer, rows, langs, names, first)
    _file_runs(writer, runs, first, len(rows))
    stored = [_stored(fields, layout.stored) for fields, layout in zip(rows, layouts, strict=True)]
    if any(layout.columns for layout in layouts) or not store_at_once(writer.perdocwriter, first, stored):
        _store_one_by_one(writer, rows, layouts, stored, first)
    writer.docnum = first + len(rows)
    writer._added = True


def _stored(fields: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A chunk's stored fields in Whoosh's order (its pickle's bytes follow the dict's order)."""
    found = {}
    for name in names:
        value = fields[name]
        if value is not None:
            found[name] = value
    return found


def _store_one_by_one(writer: Any, rows: Sequence[dict[str, Any]], layouts: list[Layout], stored: list[dict[str, Any]], first: int) -> None:
    """Each chunk's stored fields and columns through Whoosh's `start_doc` ... `finish_doc`."""
    perdocwriter = writer.perdocwriter
    plan = writer._plan
    for docnum, fields, layout, values in zip(range(first, first + len(rows)), rows, layouts, stored, strict=True):
        perdocwriter.start_doc(docnum)
        try:
            perdocwriter._storedfields.update(values)
            for name in layout.columns:
                value = fields[name]
                if value is not None:
                    field, _, _, column, _ = plan[name]
                    perdocwriter.add_column_value(name, column, field.to_column_value(value))
        except Exception:
            perdocwriter.cancel_doc()
            raise
        perdocwriter.finish_doc()


def store_at_once(perdocwriter: Any, first: int, stored: list[dict[str, Any]]) -> bool:
    """Documents `first`, `first + 1`... with these stored fields, as one `start_doc` ... `finish_doc` each
    would write them into the stored column (`PickleColumn` over `CompressedBytesColumn`): each pickled
    and compressed alone as before, but through one `map` and one write. False (nothing done) where
    the column is not the one 2.7.5 makes or a document stores nothing (Whoosh then writes no value)."""
    column = perdocwriter._colwriters.get("_stored")
    inner: Any = getattr(column, "_child", None)
    if type(column) is not PICKLE_WRITER or type(inner) is not COMPRESSED_WRITER or not all(stored):
        return False
    if perdocwriter._indoc or perdocwriter._doccount != first:
        return False
    blobs = list(map(inner._compress, map(dumps, stored, repeat(2)), repeat(inner._level)))
    sizes = list(map(len, blobs))
    inner.fill(first)
    inner._dbfile.write(b"".join(blobs))
    _extend(inner._lengths, sizes)
    offsets = list(accumulate(sizes, initial=inner._offset_base))
    inner._offset_base = offsets.pop()
    _extend(inner._offsets, offsets)
    inner._count = first + len(blobs)
    perdocwriter._docnum = first + len(blobs) - 1  # as after the last `finish_doc`
    perdocwriter._doccount = first + len(blobs)
    perdocwriter._storedfields = {}
    return True


def _extend(numbers: Any, values: list[int]) -> None:
    """`GrowableArray.extend` (an `append` per value, widening the array when one overflows it), in one pass."""
    array_ = numbers.array
    size = len(array_)
    try:
        array_.extend(values)
    except OverflowError:  # a value too wide for the array's type: Whoosh's own path widens it
        del array_[size:]
        numbers.extend(values)


def _analysed_runs(writer: Any, rows: Sequence[dict[str, Any]], langs: Sequence[str], names: list[str], first: int) -> list[Run]:
    """Each indexed field's runs of a shared value, analysed (`FieldAnalyser.items`, with its memo)."""
    analyser = writer._analyser
    items_of = analyser.items
    by_language = analyser.by_language
    plan = writer._plan
    end = len(rows)
    one_language = langs.count(langs[0]) == end
    runs: list[Run] = []
    for name in names:
        if not plan[name][1]:  # not indexed
            continue
        values = list(map(dict.get, rows, repeat(name)))
        value = values[0]
        # Most fields: one value in every chunk (the note's own), so one run, found with a count in C.
        if value is not None and values.count(value) == end and (one_language or not by_language[name]) and analyser.shares(name, value):
            runs.append((name, first, end, items_of(name, value, langs[0])))
            continue
        if not any(map(eq, values, islice(values, 1, None))):  # no two neighbours equal (a chunk's own id, body): a run each
            runs += [(name, first + i, 1, items_of(name, value, langs[i])) for i, value in enumerate(values) if value is not None]
            continue
        for start, count in value_runs(values, langs, by_language[name], partial(analyser.shares, name)):
            runs.append((name, first + start, count, items_of(name, values[start], langs[start])))
    return runs


def _file_runs(writer: Any, runs: list[Run], first: int, end: int) -> None:
    """The runs' postings into the pool, and their length bytes into the length columns, a field at a time."""
    pool = writer.pool
    assert isinstance(pool, TermPool)  # `add_note` checked
    add_run = pool.add_run
    add_items = pool.add_items
    field_lengths = writer.perdocwriter._fieldlengths
    known = writer._lengths
    codes: dict[str, bytearray] = {}  # field -> the note's length bytes, 0 where a chunk has none
    for name, start, count, items in runs:
        if count == 1:  # a chunk's own value (its id, its text)
            add_items(name, start, items)
        else:
            add_run(name, start, count, items)
        length = items[3]
        if not length:
            continue
        lb, quantised = QUANTISED[length]
        found = codes.get(name)
        if found is None:
            found = codes[name] = bytearray(end)
        if count == 1:
            found[start - first] = lb
            known[name][start] = quantised
            field_lengths[name] += length
            continue
        row = start - first
        found[row : row + count] = _BYTES[lb] * count
        field_lengths[name] += length * count
        known[name].update(zip(range(start, start + count), repeat(quantised)))
    plan = writer._plan
    for name, found in codes.items():
        write_lengths(writer.perdocwriter, plan[name][4], first, found)


_BYTES = [bytes((i,)) for i in range(256)]


def write_lengths(perdocwriter: Any, lenfield: str, first: int, codes: bytearray) -> None:
    """Length bytes of documents `first`, `first + 1`... into their column (made if new), as a
    `NumericColumn` writer's `add` per document (skipping 0, its default) writes them: in one write."""
    colwriters = perdocwriter._colwriters
    column = colwriters.get(lenfield)
    if column is None:  # the field's first length: the column Whoosh's `add_column_value` would make
        perdocwriter._create_column(lenfield, LENGTHS_COLUMN)
        column = colwriters[lenfield]
    data = codes.rstrip(b"\0")  # a missing length after the last is written by the column's `fill`, as before
    if type(column) is not NUMERIC_WRITER or column._defaultbytes != b"\0":  # not the column 2.7.5 makes
        for docnum, lb in enumerate(data, first):
            column.add(docnum, lb)
        return
    if first > column._count:
        column.fill(first)
    column._dbfile.write(bytes(data))  # a 0 inside is the default byte `fill` would write before the next
    column._count = first + len(data)
