"""What the keyword index stores and how: the Whoosh schema, a note's rows, the filter query.

Split from `core.index.keyword_index`, which keeps the index itself (opening,
writing under its lock, searching, the CJK phrase side). This module is the
contract between the index and the rest of Cairn: the fields a chunk is written
with (`document_fields`), the typed view a hit is read back as (`StoredChunk`),
and the filters spelled as those fields (`filter_query`). A change here changes
what is on disk, so `ANALYZER_VERSION` (part of the index hash) lives with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from whoosh.analysis import Analyzer
from whoosh.fields import ID, KEYWORD, NUMERIC, STORED, TEXT, Schema

from core.base.models import Document, chunk_id
from core.index.analysis import build_analyzer
from core.index.manifest import task_row
from core.index.property_terms import property_terms, whoosh_filter
from core.index.whoosh_pin import lean_query
from core.vault.language import detect_language

if TYPE_CHECKING:
    from whoosh import query as wq  # a search's: imported by `filter_query`, not by `cairn index`

    from core.base.models import SearchFilters  # a search's (core.base.search_models)

ANALYZER_VERSION = "a5"  # part of the index hash: a change here rebuilds the index. a4: typed properties, tasks; a5: names
INDEX_NAME = "chunks"  # Whoosh's index name: its TOC and every segment file start with it


def analyzer() -> Analyzer:
    """CJK bigrams, per-language stemming and accent folding (see `core.index.analysis`)."""
    return build_analyzer()


def build_schema() -> Schema:
    ana = analyzer()
    return Schema(
        chunk_id=ID(unique=True, stored=True),
        vault=ID(stored=True),
        rel_path=ID(stored=True),
        folders=KEYWORD(commas=True, lowercase=True),
        ordinal=NUMERIC(stored=True),
        title=TEXT(analyzer=ana, field_boost=2.0, stored=True),
        aliases=TEXT(analyzer=ana, field_boost=1.5),
        names=TEXT(analyzer=ana, field_boost=2.0),  # the note's folders and dotted name parts (`name_words`)
        heading_path=TEXT(analyzer=ana, field_boost=1.5, stored=True),
        tags=KEYWORD(commas=True, lowercase=True, scorable=True, stored=True),
        body=TEXT(analyzer=ana, stored=True),
        lang=ID(stored=True),  # the chunk's detected language: shown in Debug, filtered by `lang:`
        date=ID(stored=True),
        doc_type=ID(stored=True),
        confidentiality=ID(stored=True),
        document_version=ID(stored=True),
        start_byte=STORED(),
        end_byte=STORED(),
        page=STORED(),  # a PDF chunk's page; absent for a note's
        props=KEYWORD(commas=True, lowercase=True),  # typed property and task-state terms, for filters
        meta=STORED(),  # on a note's first chunk: its property terms and tasks, for rebuilding a lost manifest
    )


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as the keyword index stores it: enough to show a hit without re-reading the note.

    The typed face of Whoosh's stored-fields dict, so no other module depends on its keys.
    """

    chunk_id: str
    vault: str
    rel_path: str
    ordinal: int
    title: str
    heading_path: str
    tags: tuple[str, ...]
    body: str
    date: str | None
    doc_type: str | None
    confidentiality: str
    document_version: str
    start_byte: int
    end_byte: int
    page: int | None = None  # 1-based page of a PDF's chunk; None for a note
    lang: str = ""  # the chunk's detected language (ISO 639-1), "" when unknown
    meta: Mapping[str, Any] | None = None  # the note's property terms ("p") and task rows ("t"), on its first chunk

    @classmethod
    def from_fields(cls, f: Mapping[str, Any]) -> StoredChunk:
        return cls(
            chunk_id=str(f["chunk_id"]),
            vault=str(f["vault"]),
            rel_path=str(f["rel_path"]),
            ordinal=int(f["ordinal"]),
            title=str(f.get("title") or ""),
            heading_path=str(f.get("heading_path") or ""),
            tags=tuple(t for t in str(f.get("tags") or "").split(",") if t),
            body=str(f.get("body") or ""),
            date=f.get("date") or None,
            doc_type=f.get("doc_type") or None,
            confidentiality=str(f.get("confidentiality") or "internal"),
            document_version=str(f.get("document_version") or ""),
            start_byte=int(f["start_byte"]),
            end_byte=int(f["end_byte"]),
            page=stored_page(f.get("page")),
            lang=str(f.get("lang") or ""),
            meta=f.get("meta") or None,
        )


def stored_page(value: Any) -> int | None:
    """A stored page number (absent, or -1 for a note's chunk, means none)."""
    return None if value is None or int(value) < 1 else int(value)


def folder_ancestors(rel_path: str) -> list[str]:
    """'a/b/c.md' -> ['a', 'a/b']: lets `folder:a` match everything below a."""
    parts = rel_path.split("/")[:-1]
    return ["/".join(parts[: i + 1]).replace(",", " ") for i in range(len(parts))]


def name_words(rel_path: str) -> str:
    """The words a note's place names, searched as title words: its folders and a dotted name's parts.

    `Queries/Global Query.md` -> "Queries"; Dendron's `lang.rust.ownership.md` -> "lang rust
    ownership" (the tokenizer keeps a dotted name as one word, so "ownership" would not
    find it). A note's title says what it is; its folders and hierarchy say what it is about.
    """
    path = PurePosixPath(rel_path)
    parts = [*path.parent.parts]
    if "." in path.stem:
        parts += [p for p in path.stem.split(".") if p]
    return " ".join(parts)


def document_fields(doc: Document) -> list[dict[str, Any]]:
    folders = ",".join(folder_ancestors(doc.rel_path))
    names = name_words(doc.rel_path)
    tags = ",".join(doc.tags)
    note_lang = ""  # worked out only when a chunk needs it: most chunks say their own language
    aliases = " ".join(doc.aliases)
    terms = property_terms(doc.properties, doc.tasks)
    props = ",".join(terms)
    meta = {"p": list(terms), "t": [task_row(t) for t in doc.tasks]} if terms else None
    rows: list[dict[str, Any]] = []
    # The note's own values, looked up once; each chunk's row is a dict display (one dict, not
    # `dict(**kwargs)`'s two), its keys in the same order as ever.
    vault, rel_path, title, version = doc.vault, doc.rel_path, doc.title, doc.document_version
    date, doc_type, confidentiality = doc.date or "", doc.doc_type or "", doc.confidentiality
    named: dict[str, Any] = {"names": names} if names else {}
    with_props: dict[str, Any] = {"props": props} if props else {}
    for chunk in doc.chunks:
        lang = detect_language(chunk.text)
        if not lang:
            # A chunk too short to tell (a heading, a code block) takes the note's language.
            if not note_lang:
                many = len(doc.chunks) > 1  # a note of one chunk says no more than that chunk
                note_lang = (many and detect_language(" ".join(c.text for c in doc.chunks[:8]))) or "en"
            lang = note_lang
        rows.append(
            {
                "chunk_id": chunk_id(vault, rel_path, chunk.ordinal),
                "vault": vault,
                "rel_path": rel_path,
                "folders": folders,
                "ordinal": chunk.ordinal,
                "title": title,
                "aliases": aliases,
                **named,
                "heading_path": chunk.heading_path,
                "tags": tags,
                "body": chunk.text,
                "lang": lang,
                "date": date,
                "doc_type": doc_type,
                "confidentiality": confidentiality,
                "document_version": version,
                "start_byte": chunk.start_byte,
                "end_byte": chunk.end_byte,
                **({"page": chunk.page} if chunk.page is not None else {}),
                **with_props,
                **({"meta": meta} if meta and not rows else {}),
            }
        )
    return rows


def filter_query(filters: SearchFilters) -> wq.Query | None:
    """Whoosh form of the filters (vault choice happens a level up: one index per vault)."""
    lean_query()
    from whoosh import query as wq

    parts: list[wq.Query] = []
    if filters.folders:
        # spelled as `folder_ancestors` indexed it (a comma would split the KEYWORD field)
        parts.append(wq.Or([wq.Term("folders", f.strip("/").replace(",", " ").lower()) for f in filters.folders]))
    if filters.path_prefixes:
        parts.append(wq.Or([wq.Prefix("rel_path", p) for p in filters.path_prefixes]))
    if filters.tags:
        terms = [wq.Term("tags", t.lower()) for t in filters.tags]
        parts.append(wq.And(terms) if filters.tag_mode == "all" else wq.Or(terms))
    if filters.doc_types:
        parts.append(wq.Or([wq.Term("doc_type", t) for t in filters.doc_types]))
    if filters.after or filters.before:
        parts.append(wq.TermRange("date", filters.after or "0000-00-00", filters.before or "9999-99-99"))
    if filters.languages:
        parts.append(wq.Or([wq.Term("lang", lang.lower()) for lang in filters.languages]))
    parts.extend(whoosh_filter(f) for f in filters.where)
    if filters.paths is not None:
        parts.append(wq.Or([wq.Term("rel_path", p) for p in sorted(filters.paths)]) if filters.paths else wq.NullQuery)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)
