"""Manifest records derived from parsed notes, or rebuilt from the keyword index."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from core.base.models import Document
from core.index.embed_text import chunk_hash
from core.index.manifest import ChunkRecord, FileRecord, task_from_row
from core.index.property_terms import property_terms

if TYPE_CHECKING:
    from core.index.keyword_schema import StoredChunk


class StoredChunks(Protocol):
    """The keyword index as the rebuilt manifest reads it (`core.index.keyword_index.KeywordIndex`; not
    imported: the parallel build's worker makes records too, and needs not the search side of the index)."""

    def all_stored(self) -> list[StoredChunk]: ...


def files_from_keyword(keyword: StoredChunks) -> dict[str, FileRecord]:
    """Rebuild the manifest from Whoosh's stored fields after a torn manifest write.

    Sizes and mtimes are unknown (-1), so the next sync hashes every note once but
    re-parses only those whose content differs from what the index holds.
    """
    by_note: dict[str, list[StoredChunk]] = {}
    for chunk in keyword.all_stored():
        by_note.setdefault(chunk.rel_path, []).append(chunk)
    files: dict[str, FileRecord] = {}
    for rel, rows in by_note.items():
        rows.sort(key=lambda c: c.ordinal)
        first = rows[0]
        files[rel] = FileRecord(
            version=first.document_version,
            size=-1,
            mtime_ns=-1,
            title=first.title,
            tags=first.tags,
            date=first.date,
            doc_type=first.doc_type,
            confidentiality=first.confidentiality,
            props=tuple((first.meta or {}).get("p", ())),
            tasks=tuple(task_from_row(r) for r in (first.meta or {}).get("t", ())),
            chunks=tuple(
                ChunkRecord(
                    c.ordinal,
                    chunk_hash(first.title, c.heading_path, c.body),
                    c.start_byte,
                    c.end_byte,
                    c.heading_path,
                    c.page,
                )
                for c in rows
            ),
        )
    return files


def files_matching_keyword(files: dict[str, FileRecord], keyword: StoredChunks) -> dict[str, FileRecord]:
    """The manifest after a crash with the dirty flag set: the keyword index is the truth.

    Live updates (and a sync cut short) commit to Whoosh before the manifest is saved, so
    the manifest on disk may lack notes the index holds, list notes it no longer holds, or
    name older versions. A record is kept (with its size and mtime, so the note is not even
    hashed) where its version matches the index; otherwise the index's record is used, and
    the next sync hashes that note and re-parses it only if the file differs from the index.
    """
    indexed = files_from_keyword(keyword)
    out: dict[str, FileRecord] = {}
    for rel, rec in indexed.items():
        old = files.get(rel)
        out[rel] = old if old is not None and old.version == rec.version else rec
    for rel, rec in files.items():
        if rel not in indexed and not rec.chunks:
            out[rel] = rec  # a note without chunks has nothing in the index to compare with
    return out


def chunk_hashes(doc: Document) -> tuple[str, ...]:
    """The manifest's hash of each of the note's chunks (`chunk_hash`: ~0.25 ms a chunk, a tenth of a
    cold index's manifest work): the parallel build's worker makes them, with the whole record
    (`core.index.segment_worker.IndexedNote`), for the notes it builds."""
    return tuple(chunk_hash(doc.title, c.heading_path, c.text) for c in doc.chunks)


def record_for(doc: Document, hashes: tuple[str, ...] | None = None) -> FileRecord:
    """The manifest's record of a parsed note; `hashes` are its chunks' hashes when made already."""
    if hashes is None or len(hashes) != len(doc.chunks):
        hashes = chunk_hashes(doc)
    return FileRecord(
        version=doc.document_version,
        size=doc.size,
        mtime_ns=doc.mtime_ns,
        title=doc.title,
        tags=doc.tags,
        date=doc.date,
        doc_type=doc.doc_type,
        confidentiality=doc.confidentiality,
        chunks=tuple(ChunkRecord(c.ordinal, h, c.start_byte, c.end_byte, c.heading_path, c.page) for c, h in zip(doc.chunks, hashes, strict=True)),
        props=property_terms(doc.properties, doc.tasks),
        tasks=doc.tasks,
    )
