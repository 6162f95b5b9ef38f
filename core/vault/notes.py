"""Turn a note's raw bytes into a `Document`: properties, title, tags and chunks."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from core.base.digest import sha256_hex
from core.base.models import Chunk, Document, FileWarning
from core.vault.chunker import ChunkLimits, chunk_markdown, chunk_text, new_parser
from core.vault.frontmatter import clean_text, parse_front_matter
from core.vault.links import MAX_LINK_BRACKETS, extract_links_capped, new_link_parser
from core.vault.obsidian_settings import VaultSettings
from core.vault.tasks import TaskRead, read_tasks

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

BOM = b"\xef\xbb\xbf"
MAX_TAGS = 500
DEFAULT_SETTINGS = VaultSettings()


def document_version(raw: bytes) -> str:
    return sha256_hex(raw)


def parse_note(
    vault: str,
    rel_path: str,
    raw: bytes,
    *,
    size: int,
    mtime_ns: int,
    limits: ChunkLimits = ChunkLimits(),
    parser: MarkdownIt | None = None,
    link_parser: MarkdownIt | None = None,
    settings: VaultSettings | None = None,
) -> Document:
    """Parse one note. Never raises on bad content: problems become warnings.

    `settings` (the vault's `.obsidian` settings) types its properties and names its daily notes.
    """
    settings = settings or DEFAULT_SETTINGS
    warnings: list[FileWarning] = []
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        warnings.append(
            FileWarning(rel_path, "invalid_utf8", f"invalid UTF-8 at byte {exc.start}; decoded with replacement characters")
        )
    offset = len(BOM) if raw.startswith(BOM) else 0
    fm = parse_front_matter(raw, offset, settings.types)
    if fm.error:
        warnings.append(FileWarning(rel_path, "front_matter", fm.error))
    body = chunk_markdown(raw, fm.end_byte, limits, parser or new_parser())
    if body.truncated:
        warnings.append(
            FileWarning(rel_path, "too_many_chunks", f"only the first {limits.max_chunks} chunks are indexed")
        )
    tags = list(dict.fromkeys(fm.tags + body.inline_tags))  # an ordered set: linear in the tag count
    if len(tags) > MAX_TAGS:
        # Every chunk carries the note's tags: 50,000 of them times hundreds of chunks would
        # take minutes to index and say nothing a search could use.
        warnings.append(FileWarning(rel_path, "too_many_tags", f"{len(tags):,} tags; only the first {MAX_TAGS:,} are indexed"))
        tags = tags[:MAX_TAGS]
    title = clean_text(fm.title or body.first_h1 or PurePosixPath(rel_path).stem)
    chunks = body.chunks
    if not chunks and fm.end_byte > offset:
        chunks = _front_matter_chunk(raw, offset, fm.end_byte, limits.hard_chars)
    first_line = raw.count(b"\n", 0, fm.end_byte) + 1
    text = raw[fm.end_byte :].decode("utf-8", "replace")
    inline = body.inline
    if inline is None and body.parsed_inline is not None and text.count("[") <= MAX_LINK_BRACKETS:
        inline = body.parsed_inline  # markdown-it's blocks from the chunker: no second block pass for links
    references = body.references if inline is body.inline else ()  # the scanner's, for its inline texts
    links, capped = extract_links_capped(
        text, first_line=first_line, parser=link_parser or new_link_parser(), inline=inline, references=references
    )
    if capped:
        warnings.append(FileWarning(rel_path, "too_many_brackets", f"over {MAX_LINK_BRACKETS:,} '['; links after that are not read"))
    tasks = read_tasks(text, first_line) if b"[" in raw else TaskRead((), ())
    warnings.extend(FileWarning(rel_path, "task", p) for p in tasks.problems[:20])
    return Document(
        vault=vault,
        rel_path=rel_path,
        document_version=document_version(raw),
        size=size,
        mtime_ns=mtime_ns,
        title=title,
        tags=tuple(tags),
        date=fm.date or settings.daily_date(rel_path),
        doc_type=fm.doc_type,
        project=fm.project,
        confidentiality=fm.confidentiality,
        aliases=fm.aliases,
        chunks=chunks,
        warnings=tuple(warnings),
        links=fm.links + links,
        properties=fm.properties,
        tasks=tasks.tasks,
    )


_TITLE_LINE = re.compile(rb"^title[ \t]*:[^\r\n]*", re.MULTILINE | re.IGNORECASE)
_ANY_LINE = re.compile(rb"^(?!---|\.\.\.)[^\s][^\r\n]*", re.MULTILINE)


def _front_matter_chunk(raw: bytes, start: int, end: int, hard_chars: int) -> tuple[Chunk, ...]:
    """A note with only front matter still gets one chunk, so it is in the index and can be
    found by its title (every chunk row carries the title field): the `title:` line (or the
    first property line), an exact byte range like every chunk, and nothing more of the block."""
    block = raw[start:end]
    m = _TITLE_LINE.search(block) or _ANY_LINE.search(block)
    if m is None:
        return ()
    a, b = start + m.start(), start + min(m.end(), m.start() + hard_chars)
    text = chunk_text(raw, a, b)
    if text != text.strip() or not text:
        return ()
    return (Chunk(0, "", a, b, text),)
