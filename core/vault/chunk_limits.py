"""How big a chunk may be: the limits every chunker obeys and that name the index's chunking.

Apart from `core.vault.chunker` because opening an index needs the limits (they are part
of its chunking hash, `core.index.indexer.chunking_hash`) while only writing one needs the
chunker: a `cairn search` imports this module, not the chunker and its line scanner.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SOFT_CHARS = 1000
DEFAULT_HARD_CHARS = 2000
DEFAULT_MAX_CHUNKS = 2000


@dataclass(frozen=True, slots=True)
class ChunkLimits:
    """A chunk is cut near `soft_chars`, never past `hard_chars`; a note gives at most `max_chunks`."""

    soft_chars: int = DEFAULT_SOFT_CHARS
    hard_chars: int = DEFAULT_HARD_CHARS
    max_chunks: int = DEFAULT_MAX_CHUNKS

    def signature(self) -> str:
        """Part of the chunking hash: a change here means every note must be re-chunked."""
        return f"soft={self.soft_chars};hard={self.hard_chars};max={self.max_chunks};v1"
