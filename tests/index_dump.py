"""A canonical dump of a Whoosh index, to hold two ways of writing it equal."""

from __future__ import annotations

from typing import Any


def index_dump(ix: Any) -> dict[str, Any]:
    """Every term's postings (docnum, weight, encoded value), every field length, every stored doc."""
    out: dict[str, Any] = {}
    with ix.reader() as reader:
        for fieldname, tbytes in reader.all_terms():
            m = reader.postings(fieldname, tbytes)
            rows = []
            while m.is_active():
                rows.append((m.id(), m.weight(), m.value()))
                m.next()
            info = reader.term_info(fieldname, tbytes)  # block statistics: BM25's score bounds read them
            stats = (info.min_length(), info.max_length(), info.max_weight(), info.doc_frequency(), info.weight())
            out[f"{fieldname}:{tbytes!r}"] = (rows, stats)
        for docnum in range(reader.doc_count_all()):
            lengths = [reader.doc_field_length(docnum, f) for f in ("title", "aliases", "heading_path", "body", "tags")]
            out[f"doc{docnum}"] = (reader.stored_fields(docnum), lengths)
        out["lengths"] = [reader.field_length(f) for f in ("title", "aliases", "heading_path", "body", "tags")]
    return out


def index_dump_by_chunk(ix: Any, *, stats: bool = True) -> dict[str, Any]:
    """`index_dump` keyed by chunk id instead of docnum: equal for the same chunks in any segments.

    Block statistics (min/max length) are per segment, so only a term's document frequency
    and total weight are compared, and only with `stats`: Whoosh leaves a deleted chunk in them
    (and in the field totals).
    """
    out: dict[str, Any] = {}
    with ix.reader() as reader:
        ids = {docnum: fields["chunk_id"] for docnum, fields in reader.iter_docs()}
        for fieldname, tbytes in reader.all_terms():
            m = reader.postings(fieldname, tbytes)
            rows = []
            while m.is_active():
                rows.append((ids[m.id()], m.weight(), m.value()))
                m.next()
            info = reader.term_info(fieldname, tbytes)
            if stats:
                out[f"{fieldname}:{tbytes!r}"] = (sorted(rows), info.doc_frequency(), round(info.weight(), 3))
            elif rows:  # a term only deleted chunks held is still listed
                out[f"{fieldname}:{tbytes!r}"] = sorted(rows)
        for docnum, cid in ids.items():
            lengths = [reader.doc_field_length(docnum, f) for f in ("title", "aliases", "heading_path", "body", "tags")]
            out[f"doc:{cid}"] = (reader.stored_fields(docnum), lengths)
        if stats:
            out["lengths"] = [reader.field_length(f) for f in ("title", "aliases", "heading_path", "body", "tags")]
    return out
