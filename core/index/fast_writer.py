"""A Whoosh segment writer that writes the same segment as Whoosh's, faster.

Profiling a cold index of a real vault (tldr, 6,417 notes) put ~60 % of the
time in Whoosh's generic write path: every posting goes through a chain of
token generators, is sized and appended to a pool of 390k tuples that is sorted
whole at commit, and for each posting written the document's field length is
read back from the length column just written. None of that is needed here:

- text fields are analysed in one pass over the words through the analyzer's own
  word -> term memo, a note's title, aliases, folders and tags once per note and
  language (`core.index.field_analysis`; a test holds the postings identical to
  Whoosh's own `field.index`), and filed once for all the note's chunks
  (`add_note`, `core.index.note_filing`);
- postings go into dicts by field and term, so commit sorts the distinct terms
  only (docnums arrive ascending), and `w3_postings` writes blocks, term infos and
  the term table in one loop, the same bytes as Whoosh's W3 codec;
- field lengths are remembered as they are written, quantised as Whoosh stores
  them, instead of being read back per posting;
- a merged segment is streamed into the new one at flush (`segment_merge`), not pooled.

Stored fields, columns, segment files, the merge policy and the TOC are Whoosh's
own code, so the index Whoosh reads is the index Whoosh would write; except that
stored fields are kept in zlib's stored blocks rather than deflated (`stored_plain`),
which Whoosh's reader reads alike.
"""
from __future__ import annotations

import heapq
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from core.index.field_analysis import Analysed, FieldAnalyser
from core.index.note_filing import COMPRESSED_WRITER, PICKLE_WRITER, QUANTISED, Layout, file_note
from core.index.segment_merge import segment_postings, write_per_doc
from core.index.term_pool import Posting, TermPool
from core.index.w3_postings import supported, write_pool, write_stream
from core.index.whoosh_pin import (
    LENGTHS_COLUMN,
    PostingPool,
    SegmentReader,
    SegmentWriter,
    W3FieldWriter,
    W3PerDocWriter,
    byte_to_length,
    length_field,
    length_to_byte,
)

#: Rough bytes one posting costs in a `TermPool` (a 3-tuple in a list, its value bytes, the float).
POSTING_BYTES = 128
NAMES_MEMO = 64  # key tuples remembered by `layout`: chunks have a handful


def stored_plain(data: bytes, level: int = 0) -> bytes:
    """A document's pickled stored fields as a zlib stream of stored (not deflated) blocks.

    Whoosh's W3 codec deflates each document's stored fields at level 3; its reader inflates
    whatever zlib stream it finds (`CompressedBytesColumn.Reader`), so the values read back the
    same. Deflating a chunk's ~1 KB cost ~20 µs, on the critical path of every build and merge,
    to save under half of the column's bytes (the figures: docs/benchmarks.md, "stored fields").
    `level` (Whoosh's) is ignored. The compressor is made with zlib's smallest state (memLevel 1):
    `zlib.compress(data, 0)` allocates its full state, ~256 KB, on every call.
    """
    packer = zlib.compressobj(0, zlib.DEFLATED, zlib.MAX_WBITS, 1)
    return packer.compress(data) + packer.flush()


def store_plain(perdocwriter: Any) -> None:
    """Make `perdocwriter`'s stored-fields column write `stored_plain` streams (where it is Whoosh's
    `PickleColumn` over `CompressedBytesColumn`, the column 2.7.5 makes)."""
    column = getattr(perdocwriter, "_colwriters", {}).get("_stored")
    inner: Any = getattr(column, "_child", None)
    if type(column) is PICKLE_WRITER and type(inner) is COMPRESSED_WRITER:
        inner._compress = stored_plain


class _Lengths:
    """Field lengths as the segment stores them, remembered on the way in (falls back to the column)."""

    def __init__(self, known: dict[str, dict[int, int]], reader: Any, scorable: frozenset[str]) -> None:
        self.known = known
        self.reader = reader
        self.scorable = scorable

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> int:
        found = self.known.get(fieldname, {}).get(docnum)
        if found is not None:
            return found
        if fieldname not in self.scorable:  # no length column: asking Whoosh costs a file-exists check
            return default
        return self.reader.doc_field_length(docnum, fieldname, default)  # a merged segment's document


class FastSegmentWriter(SegmentWriter):
    """Whoosh's SegmentWriter with a faster `add_document` and commit (see the module docstring).

    `add_document` takes the chunk's stemming language as `_lang` (Cairn analyses each chunk
    in its own language) and, optionally, its fields analysed already as `_analysed`.
    """

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        store_plain(self.perdocwriter)
        self._limitmb: int = kwargs.get("limitmb", 128)
        self.pool: TermPool | PostingPool = TermPool()
        self._merged: list[tuple[Any, int, Any]] = []  # (segment, first docnum here, docnum map) merged in at flush
        self._flushed: list[Any] | None = None  # the segments `flush_now` left for the table of contents
        self._lengths: dict[str, dict[int, int]] = {name: {} for name, field in self.schema.items() if field.scorable}
        self._analyser = FieldAnalyser(self.schema)
        self._layouts: dict[tuple[str, ...], Layout] = {}  # a chunk's keys -> its field names (`layout`)
        #: field -> (field, indexed, stored, column type, length column name), looked up once per chunk field
        self._plan = {
            name: (field, field.indexed, field.stored, field.column_type, length_field(name)) for name, field in self.schema.items()
        }

    def add_document(self, **fields: Any) -> None:
        self._check_state()
        perdocwriter = self.perdocwriter
        docnum = self.docnum
        lang = str(fields.get("_lang") or "en")
        analysed: Analysed = fields.get("_analysed") or self._analyser.analyse(fields, lang)
        names = (self._layouts.get(tuple(fields)) or self.layout(fields)).names
        perdocwriter.start_doc(docnum)
        try:
            if type(perdocwriter) is W3PerDocWriter:
                self._add_w3_fields(perdocwriter, fields, names, analysed, docnum)
            else:
                self._add_fields(perdocwriter, fields, names, analysed, docnum)
        except Exception:
            perdocwriter.cancel_doc()
            raise
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def add_note(self, rows: Sequence[dict[str, Any]], langs: Sequence[str]) -> None:
        """A note's chunks as consecutive documents (`langs`: each one's language): the segment
        `add_document` per chunk writes, with a value the chunks share filed once for them all
        (`core.index.note_filing`). If it raises, the writer is to be cancelled (a note may be
        half filed), as `KeywordStore.writing` does."""
        if type(self.perdocwriter) is W3PerDocWriter and isinstance(self.pool, TermPool):
            self._check_state()
            file_note(self, rows, langs)
            return
        for fields, lang in zip(rows, langs, strict=True):
            self.add_document(**fields, _lang=lang)

    def layout(self, fields: dict[str, Any]) -> Layout:
        """A chunk's field names in Whoosh's order, checked against the schema, and those stored and
        with a column; remembered by the chunk's keys (every chunk has the same few key tuples: a
        lookup instead of a sort and a set)."""
        found = self._layouts.get(tuple(fields))
        if found is not None:
            return found
        names = sorted(name for name in fields if not name.startswith("_"))
        if not self._plan.keys() >= set(names):
            self._check_fields(self.schema, names)  # raises Whoosh's UnknownFieldError
        if len(self._layouts) >= NAMES_MEMO:
            self._layouts.clear()
        plan = self._plan
        found = self._layouts[tuple(fields)] = Layout(
            names, tuple(n for n in names if plan[n][2]), tuple(n for n in names if plan[n][3])
        )
        return found

    def _add_w3_fields(self, perdocwriter: Any, fields: dict[str, Any], names: list[str], analysed: Analysed, docnum: int) -> None:
        """W3PerDocWriter.add_field, inlined (17 calls a chunk): the stored value, the length byte."""
        stored = perdocwriter._storedfields
        colwriters = perdocwriter._colwriters
        plan = self._plan
        pool = self.pool
        file_items = pool.add_items if isinstance(pool, TermPool) else None  # `_pool_field`, inlined: 15 indexed fields a chunk
        for fieldname in names:
            value = fields[fieldname]
            if value is None:
                continue
            field, indexed, is_stored, column, lenfield = plan[fieldname]
            if not indexed:
                length = 0
            elif file_items is not None:
                items = analysed[fieldname]
                file_items(fieldname, docnum, items)
                length = items[3]
            else:
                length = self._pool_field(fieldname, docnum, analysed)
            if is_stored:
                stored[fieldname] = value
            if length:
                lb, quantised = QUANTISED[length]
                lengths_column = colwriters.get(lenfield)
                if lengths_column is None:  # the field's first length: Whoosh makes the column
                    perdocwriter.add_column_value(lenfield, LENGTHS_COLUMN, lb)
                else:  # what add_column_value does then, without its two lookups
                    lengths_column.add(docnum, lb)
                perdocwriter._fieldlengths[fieldname] += length
                self._lengths[fieldname][docnum] = quantised
            if column:
                perdocwriter.add_column_value(fieldname, column, field.to_column_value(value))

    def _add_fields(self, perdocwriter: Any, fields: dict[str, Any], names: list[str], analysed: Analysed, docnum: int) -> None:
        """The same through any per-document writer's own `add_field`."""
        for fieldname in names:
            value = fields[fieldname]
            if value is None:
                continue
            field, indexed, is_stored, column, _ = self._plan[fieldname]
            length = self._pool_field(fieldname, docnum, analysed) if indexed else 0
            perdocwriter.add_field(fieldname, field, value if is_stored else None, length)
            if length:
                self._lengths[fieldname][docnum] = byte_to_length(length_to_byte(length))
            if column:
                perdocwriter.add_column_value(fieldname, column, field.to_column_value(value))

    def _pool_field(self, fieldname: str, docnum: int, analysed: Analysed) -> int:
        """Put one field's postings in the pool; its length in words."""
        items = analysed[fieldname]
        pool = self.pool
        if isinstance(pool, TermPool):
            pool.add_items(fieldname, docnum, items)
        else:
            for term, weight, vbytes in zip(*items[:3], strict=True):
                pool.add((fieldname, term.encode() if isinstance(term, str) else term, docnum, weight, vbytes))
        return int(items[3])

    def add_postings_to_pool(self, reader: Any, startdoc: int, docmap: Any) -> None:
        """Postings of a segment merged into this one (Whoosh's merge policy calls this).

        A W3 segment's postings are not pooled at all: the segment is remembered and, at
        flush, its term-ordered postings are streamed beside the new documents' into the
        new segment (`_merged_postings`): one pass, memory bounded by one posting list.
        Otherwise they go to the dict pool, and past the writer's `limitmb` to Whoosh's
        own pool, which spills sorted runs to disk (one merge of ~21 segments once took
        the first index of 100k chunks to 1.1 GB).
        """
        if segment_postings(reader) is not None and reader.segment() is not None:
            self._merged.append((reader.segment(), startdoc, docmap))
            return
        limit = self._limitmb * 1024 * 1024 // POSTING_BYTES
        add = self.pool.add
        for item in self._process_posts(reader.iter_postings(), startdoc, docmap):
            add(item)
            pool = self.pool
            if isinstance(pool, TermPool) and pool.count > limit:
                self.pool = self._spilling_pool(pool)
                add = self.pool.add

    def flush_now(self, mergetype: Any = None, optimize: Any = None, merge: Any = None) -> None:
        """Merge and write this writer's segment now; `commit` then writes only the table of contents.

        The parallel build's indexing process writes its segment while it waits for the worker's
        last one, which joins the same table of contents (`commit(extra_segments=...)`). Deletions
        must be made before (a segment merged here takes its live documents with it).
        """
        self._check_state()
        segments = self._merge_segments(mergetype, optimize, merge)
        if self._added:
            segments.append(self._finalize_segment())
        else:
            self._close_segment()
        self._flushed = segments

    def commit(self, mergetype: Any = None, optimize: Any = None, merge: Any = None, *, extra_segments: Sequence[Any] = ()) -> None:
        """Whoosh's commit; `extra_segments`, finished elsewhere, join the new table of contents.

        A segment another process built (`core.index.parallel_build`) enters the index like
        this, without its postings being read and written again.
        """
        if not extra_segments and self._flushed is None:
            super().commit(mergetype=mergetype, optimize=optimize, merge=merge)
            return
        if self._flushed is None:
            self.flush_now(mergetype, optimize, merge)
        self._check_state()
        self._commit_toc([*(self._flushed or ()), *extra_segments])
        self._finish()

    def _merged_postings(self, readers: list[Any]) -> Iterator[Posting]:
        """The new documents' postings and every remembered segment's, in (field, term, docnum) order."""
        pool = self.pool
        streams: list[Iterator[Posting]] = [pool.iter_postings()]
        for segment, startdoc, docmap in self._merged:
            reader = SegmentReader(self.storage, self.schema, segment)
            readers.append(reader)
            items = segment_postings(reader)
            assert items is not None  # checked when the segment was remembered
            streams.append(self._process_posts(items, startdoc, docmap))
        return heapq.merge(*streams)

    def write_per_doc(self, fieldnames: set[str], reader: Any) -> dict[int, int] | None:
        """A merged segment's documents (see `segment_merge.write_per_doc`)."""
        return write_per_doc(self, fieldnames, reader)

    def _spilling_pool(self, pool: TermPool) -> PostingPool:
        spilling = PostingPool(self._tempstorage, self.newsegment, limitmb=self._limitmb)
        for item in pool.iter_postings():
            spilling.add(item)
        pool.cleanup()
        return spilling

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        pdr = self.per_document_reader() if self.codec.length_stats else None
        scorable = frozenset(name for name, field in self.schema.items() if field.scorable)
        lengths = _Lengths(self._lengths, pdr, scorable) if pdr is not None else None
        fieldwriter = self.fieldwriter
        fallback = pdr.doc_field_length if pdr is not None and isinstance(fieldwriter, W3FieldWriter) and supported(fieldwriter) else None
        readers: list[Any] = []
        if self._merged:  # docnums of merged segments come after the new documents': merged in one pass
            if fallback is not None:
                write_pool(fieldwriter, self.schema, self._merged_postings(readers), self._lengths, fallback)
            else:
                fieldwriter.add_postings(self.schema, lengths, self._merged_postings(readers))
            for reader in readers:
                reader.close()
        elif fallback is not None and isinstance(self.pool, TermPool):
            write_stream(fieldwriter, self.schema, self.pool.ordered(), self._lengths, fallback)
        elif fallback is not None and isinstance(self.pool, PostingPool):  # a big merge spilled: its sorted runs, a term at a time
            write_pool(fieldwriter, self.schema, self.pool.iter_postings(), self._lengths, fallback)
        else:  # another codec: Whoosh's own loop
            fieldwriter.add_postings(self.schema, lengths, self.pool.iter_postings())
        fieldwriter.close()
        if pdr is not None:
            pdr.close()

