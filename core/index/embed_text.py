"""What the embedding model is shown for a chunk, and the cache key derived from it."""

from __future__ import annotations

import hashlib


def embedding_input(title: str, heading_path: str, text: str) -> str:
    """Where the chunk sits (title, headings), then the chunk, without repeating its heading line."""
    context = heading_path if heading_path.startswith(title) else " > ".join(p for p in (title, heading_path) if p)
    body = text
    first, _, rest = text.partition("\n")
    if first.startswith("#") and heading_path and first.lstrip("#").strip() == heading_path.split(" > ")[-1]:
        body = rest.lstrip("\n")
    return f"{context}\n{body}" if context else body


def input_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
