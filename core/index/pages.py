"""A PDF page as the index holds it: what the Preview shows for a hit in a PDF.

The page is put together from its chunks' stored text rather than read from the
PDF again, so the Preview never runs the PDF parser on the UI thread, shows
exactly the text that was searched, and can mark the hit's chunk precisely.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.base.models import chunk_id
from core.index.indexer import VaultIndex

CHUNK_JOIN = "\n\n"


@dataclass(frozen=True, slots=True)
class PageText:
    page: int
    text: str  # the page's indexed text (running headers and footers already dropped)
    start: int  # the hit's chunk, as character offsets into `text`; start == end when it is not on it
    end: int
    pages: int  # how many pages of the document hold indexed text (the last page number seen)


def page_text(index: VaultIndex, rel_path: str, page: int, ordinal: int) -> PageText | None:
    """The indexed text of `page` of an attachment, with chunk `ordinal` located in it.

    None when the file is not (or no longer) indexed or has no text on that page.
    """
    rec = index.files.get(rel_path)
    if rec is None:
        return None
    ordinals = sorted(c.ordinal for c in rec.chunks if c.page == page)
    if not ordinals:
        return None
    stored = index.keyword.stored([chunk_id(index.vault.name, rel_path, o) for o in ordinals])
    parts: list[str] = []
    start = end = 0
    pos = 0
    for o in ordinals:
        chunk = stored.get(chunk_id(index.vault.name, rel_path, o))
        if chunk is None:
            continue
        body = chunk.body
        if parts:
            pos += len(CHUNK_JOIN)
        if o == ordinal:
            start, end = pos, pos + len(body)
        parts.append(body)
        pos += len(body)
    if not parts:
        return None
    last = max((c.page for c in rec.chunks if c.page is not None), default=page)
    return PageText(page, CHUNK_JOIN.join(parts), start, end, last)
