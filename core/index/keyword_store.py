"""How chunks are written into a Whoosh index: the one path the index and the build worker share.

`KeywordIndex` writes a vault's live and bulk changes through a `KeywordStore` on its
index; the parallel build's worker (`core.index.parallel_build`) writes whole segments
through one on a scratch index of its own. Both therefore use the same writer
(`FastSegmentWriter`), the same codec settings and the same rows per note, so a segment
built in either process is the segment the other would have built.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.base.models import Document
from core.index.fast_writer import FastSegmentWriter
from core.index.keyword_schema import INDEX_NAME, build_schema, document_fields
from core.index.whoosh_pin import FileStorage, W3Codec, lean_query

LIMIT_MB = 64  # the writer's in-memory pool before Whoosh's own spills to disk


class KeywordStore:
    """Writers on one Whoosh index, with Cairn's codec settings."""

    def __init__(self, ix: Any) -> None:
        self.ix = ix

    @classmethod
    def scratch(cls, folder: str) -> KeywordStore:
        """A new, empty index in `folder`, for a segment built away from the live index."""
        return cls(FileStorage(folder).create_index(build_schema(), indexname=INDEX_NAME))

    def writer(self, *, locked: bool = True) -> FastSegmentWriter:
        """A writer; `locked=False` where nothing else can write (a worker's scratch index)."""
        # Uncompressed posting blocks: ~8% faster to write, and read back without zlib.
        extra = {} if locked else {"_lk": False}
        return FastSegmentWriter(self.ix, codec=W3Codec(compression=0), limitmb=LIMIT_MB, **extra)

    @contextmanager
    def writing(self, *, locked: bool = True) -> Iterator[FastSegmentWriter]:
        """A writer that is cancelled if the block fails; the block commits (or finishes) it."""
        writer = self.writer(locked=locked)
        try:
            yield writer
        except BaseException:
            writer.cancel()
            raise

    @staticmethod
    def delete_notes(writer: Any, rel_paths: Iterable[str]) -> None:
        """Delete every chunk of these notes from the index `writer` writes to.

        A note not in the index has nothing to delete: asking the reader whether the term exists
        is ~10x cheaper than Whoosh's delete query (a re-index of a few notes deletes few).
        """
        lean_query()  # the writer's searcher, and its delete query, import Whoosh's searching side
        reader = writer.searcher().reader()
        for rel in rel_paths:
            if ("rel_path", rel) in reader:
                writer.delete_by_term("rel_path", rel)

    @staticmethod
    def add(writer: FastSegmentWriter, docs: Iterable[Document]) -> None:
        """Every chunk of `docs` as a row; each chunk is stemmed in its own language. A note's rows go
        in together, so what its chunks share is analysed and filed once (`FastSegmentWriter.add_note`)."""
        for doc in docs:
            rows = document_fields(doc)
            writer.add_note(rows, [fields["lang"] for fields in rows])

    def build_segment(self, docs: Iterable[Document], folder: str) -> tuple[Any, tuple[str, ...]]:
        """Write `docs` as one finished segment without listing it in a table of contents.

        Returns the segment and the names of its files in `folder`, for another index to
        take in (`core.index.bulk_writer.BulkWriter.commit`).
        """
        with self.writing(locked=False) as writer:
            self.add(writer, docs)
        return self.finish_segment(writer, folder)

    @staticmethod
    def finish_segment(writer: FastSegmentWriter, folder: str) -> tuple[Any, tuple[str, ...]]:
        """Finish the segment an unlocked `writer` (`writer(locked=False)`) wrote, unlisted: the segment
        and the names of its files in `folder`. The parallel build's worker keeps one writer open across
        its claims and finishes it here."""
        try:
            segment = writer._finalize_segment()
        except BaseException:
            writer.cancel()
            raise
        writer._finish()
        prefix = segment.segment_id()  # "chunks_<random id>": every file of the segment starts so
        return segment, tuple(sorted(name for name in os.listdir(folder) if name.startswith(prefix)))

    @staticmethod
    def take_files(names: Iterable[str], source: str, directory: Path) -> None:
        """Move a built segment's files into the index folder (under the writer's lock, before its TOC)."""
        for name in names:
            os.replace(Path(source, name), directory / name)
