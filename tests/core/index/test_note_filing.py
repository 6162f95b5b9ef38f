"""A note's chunks filed together (`FastSegmentWriter.add_note`) write what one `add_document` per chunk writes.

`test_fast_writer.py` holds both ways equal to Whoosh's own writer on generated and real notes;
these pin the seams a whole-segment test could pass by luck: runs of shared values (gaps,
languages, values the analyser does not remember), a run's postings, a note's length bytes
written at once, and notes whose chunks differ in keys and languages, byte for byte.
"""

from __future__ import annotations

import io
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from whoosh import index as windex
from whoosh.codec.whoosh3 import W3Codec

from core.index.fast_writer import FastSegmentWriter
from core.index.keyword_schema import INDEX_NAME, build_schema, document_fields
from core.index.note_filing import SHARED_ROWS, value_runs, write_lengths
from core.index.term_pool import TermPool
from core.index.whoosh_pin import LENGTHS_COLUMN, StructFile
from core.vault.chunker import ChunkLimits, new_parser
from core.vault.links import new_link_parser
from core.vault.notes import parse_note
from tests.fixture_notes import note_texts


def _always(value: Any) -> bool:
    return True


def test_runs_join_equal_neighbours_and_skip_missing_values() -> None:
    langs = ["en"] * 7
    assert value_runs(["a", "a", "a", None, "a", "b", "b"], langs, False, _always) == [(0, 3), (4, 1), (5, 2)]
    assert value_runs([None, None], ["en", "en"], False, _always) == []
    assert value_runs([1, 1, 2], ["en"] * 3, False, _always) == [(0, 2), (2, 1)]


def test_runs_split_where_the_language_changes_only_for_fields_that_read_it() -> None:
    values = ["Title"] * 4
    langs = ["en", "en", "de", "de"]
    assert value_runs(values, langs, True, _always) == [(0, 2), (2, 2)]
    assert value_runs(values, langs, False, _always) == [(0, 4)]


def test_values_the_analyser_does_not_remember_are_not_joined() -> None:
    assert value_runs(["same body"] * 3, ["en"] * 3, True, lambda value: False) == [(0, 1), (1, 1), (2, 1)]


def test_a_runs_postings_are_each_documents_postings() -> None:
    items = (("rust", "book"), (2.0, 2.0), (b"p", b"q"), 2)
    by_run, by_document = TermPool(), TermPool()
    by_run.add_run("title", 5, 3, items)
    for docnum in range(5, 8):
        by_document.add_items("title", docnum, items)
    assert list(by_run.ordered()) == list(by_document.ordered())
    assert by_run.count == by_document.count == 6
    by_run.add_run("tags", 8, 2, ((b"x",), (1.0,), (b"",), 1))  # a field filed by bytes
    assert by_run.postings["tags"][b"x"] == [8, 1.0, b"", 9, 1.0, b""]
    by_run.add_run("aliases", 9, 4, ((), (), (), 0))  # no terms: the field stays out of the segment
    assert "aliases" not in by_run.fieldnames


class _Columns:
    """The part of a W3 per-document writer `write_lengths` uses, over in-memory column files."""

    def __init__(self) -> None:
        self._colwriters: dict[str, Any] = {}
        self.files: dict[str, io.BytesIO] = {}

    def _create_column(self, name: str, column: Any) -> None:
        self.files[name] = io.BytesIO()
        self._colwriters[name] = column.writer(StructFile(self.files[name]))


def test_a_notes_length_bytes_are_what_one_add_per_document_writes() -> None:
    rng = random.Random(3)
    at_once, one_by_one = _Columns(), _Columns()
    first = last = 0
    for _ in range(60):  # notes of 1-9 chunks; a chunk without the field has a 0, some notes none at all
        codes = bytearray(rng.choice((0, 0, 1, 7, 255)) for _ in range(rng.randint(1, 9)))
        if any(codes):
            write_lengths(at_once, "_f_len", first, codes)
            for docnum, lb in enumerate(codes, first):
                if lb:
                    last = docnum + 1
                    if "_f_len" not in one_by_one._colwriters:
                        one_by_one._create_column("_f_len", LENGTHS_COLUMN)
                    one_by_one._colwriters["_f_len"].add(docnum, lb)
        first += len(codes)
    for columns in (at_once, one_by_one):
        columns._colwriters["_f_len"].finish(first + 3)
    assert at_once.files["_f_len"].getvalue() == one_by_one.files["_f_len"].getvalue()
    assert len(at_once.files["_f_len"].getvalue()) == last  # no default bytes after the last length: Whoosh writes none


def _mixed_notes() -> list[Any]:
    """Generated notes, and copies whose chunks differ in language, page and path within the note."""
    parser, links = new_parser(), new_link_parser()
    docs = [
        parse_note("v", rel, text.encode(), size=len(text), mtime_ns=0, limits=ChunkLimits(300, 600), parser=parser, link_parser=links)
        for rel, text in note_texts(16).items()
    ]
    mixed = []
    for i, doc in enumerate(docs):
        chunks = [replace(c, page=(j + 1 if j % 3 else None), heading_path=(c.heading_path if j % 4 else "Same > Path")) for j, c in enumerate(doc.chunks)]
        mixed.append(replace(doc, rel_path=f"mixed{i}/{doc.rel_path}", chunks=tuple(chunks)))
    return docs + mixed


def _segment(directory: Path, docs: list[Any], per_note: bool) -> dict[str, bytes]:
    directory.mkdir()
    ix = windex.create_in(str(directory), build_schema(), indexname=INDEX_NAME)
    writer = FastSegmentWriter(ix, codec=W3Codec(compression=0), compound=False)
    for i, doc in enumerate(docs):
        rows = document_fields(doc)
        langs = [("de" if i % 2 and j >= 2 else fields["lang"]) for j, fields in enumerate(rows)]  # a note's language may change
        if per_note:
            writer.add_note(rows, langs)
        else:
            for fields, lang in zip(rows, langs, strict=True):
                writer.add_document(**fields, _lang=lang)
    writer.commit(merge=False)
    files = [p for p in directory.iterdir() if p.name.startswith(f"{INDEX_NAME}_") and "." in p.name and p.suffix != ".seg"]
    return {p.name.split(".", 1)[1]: p.read_bytes() for p in files}


@pytest.mark.parametrize("shared_rows", [2, SHARED_ROWS])
def test_a_note_at_a_time_writes_the_segment_a_chunk_at_a_time_writes_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_rows: int) -> None:
    import core.index.note_filing as note_filing

    monkeypatch.setattr(note_filing, "SHARED_ROWS", shared_rows)  # notes of fewer chunks go in a chunk at a time
    docs = _mixed_notes()
    assert sum(len(d.chunks) >= shared_rows for d in docs) >= 10
    by_note = _segment(tmp_path / "note", docs, per_note=True)
    by_chunk = _segment(tmp_path / "chunk", docs, per_note=False)
    assert {"pst", "trm", "_stored.col", "_body_len.col", "_title_len.col", "_heading_path_len.col"} <= by_chunk.keys()
    assert by_note.keys() == by_chunk.keys()
    for name in by_chunk:
        assert by_note[name] == by_chunk[name], name


def test_offsets_and_lengths_grow_as_whooshs_array_grows() -> None:
    from whoosh.util.numlists import GrowableArray

    from core.index.note_filing import _extend

    rng = random.Random(5)
    ours, whooshs = GrowableArray(allow_longs=False), GrowableArray(allow_longs=False)
    for _ in range(40):  # values past each width: the array is widened as Whoosh widens it
        values = [rng.choice((0, 7, 255, 256, 70_000, 2**31 - 1)) for _ in range(rng.randint(1, 6))]
        _extend(ours, values)
        whooshs.extend(values)
    assert ours.typecode == whooshs.typecode == "i"
    assert list(ours.array) == list(whooshs.array)


def test_a_document_storing_nothing_is_left_to_whooshs_own_path(tmp_path: Path) -> None:
    from core.index.note_filing import store_at_once

    ix = windex.create_in(str(tmp_path), build_schema(), indexname=INDEX_NAME)
    writer = FastSegmentWriter(ix, codec=W3Codec(compression=0))
    column = writer.perdocwriter._colwriters["_stored"]._child
    assert not store_at_once(writer.perdocwriter, 0, [{"title": "a"}, {}])
    assert column._count == 0 and writer.perdocwriter._doccount == 0  # nothing written
    assert store_at_once(writer.perdocwriter, 0, [{"title": "a"}, {"title": "b"}])
    assert column._count == 2 and writer.perdocwriter._doccount == 2
    writer.cancel()
