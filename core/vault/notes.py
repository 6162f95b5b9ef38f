"""Turn a note's raw bytes into a `Document`: properties, title, tags and chunks."""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath

from markdown_it import MarkdownIt

from core.base.models import Document, FileWarning
from core.vault.chunker import ChunkLimits, chunk_markdown, new_parser
from core.vault.frontmatter import parse_front_matter

BOM = b"\xef\xbb\xbf"


def document_version(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parse_note(
    vault: str,
    rel_path: str,
    raw: bytes,
    *,
    size: int,
    mtime_ns: int,
    limits: ChunkLimits = ChunkLimits(),
    parser: MarkdownIt | None = None,
) -> Document:
    """Parse one note. Never raises on bad content: problems become warnings."""
    warnings: list[FileWarning] = []
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        warnings.append(
            FileWarning(rel_path, "invalid_utf8", f"invalid UTF-8 at byte {exc.start}; decoded with replacement characters")
        )
    offset = len(BOM) if raw.startswith(BOM) else 0
    fm = parse_front_matter(raw, offset)
    if fm.error:
        warnings.append(FileWarning(rel_path, "front_matter", fm.error))
    body = chunk_markdown(raw, fm.end_byte, limits, parser or new_parser())
    if body.truncated:
        warnings.append(
            FileWarning(rel_path, "too_many_chunks", f"only the first {limits.max_chunks} chunks are indexed")
        )
    tags = list(fm.tags)
    tags.extend(t for t in body.inline_tags if t not in tags)
    title = fm.title or body.first_h1 or PurePosixPath(rel_path).stem
    return Document(
        vault=vault,
        rel_path=rel_path,
        document_version=document_version(raw),
        size=size,
        mtime_ns=mtime_ns,
        title=title,
        tags=tuple(tags),
        date=fm.date,
        doc_type=fm.doc_type,
        project=fm.project,
        confidentiality=fm.confidentiality,
        aliases=fm.aliases,
        chunks=body.chunks,
        warnings=tuple(warnings),
    )
