"""What search needs of one vault: its keyword index and, when ready, its vectors, model and words.

Kept apart from `core.search.search` so the ranking stages (`core.search.stages`) can
name a vault's side without importing the request flow that runs them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from core.base.models import SearchFilters
from core.index.keyword_index import KeywordIndex
from core.index.link_graph import LinkGraph

if TYPE_CHECKING:
    import numpy as np

    from core.index.name_vectors import NameVectors
    from core.index.vocab_vectors import VocabVectors


class VectorSearcher(Protocol):
    """One vault's vector side, as the search needs it."""

    def search(self, query: np.ndarray, filters: SearchFilters, limit: int) -> list[tuple[str, float]]: ...

    def chunk_vectors(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those chunks that have one (a note's passages compared, core.search.passages)."""
        ...


class QueryEmbedder(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class VaultSearchSide:
    """What search needs of one vault: its keyword index and, when ready, its vectors."""

    name: str
    keyword: KeywordIndex
    vectors: VectorSearcher | None = None
    embedder: QueryEmbedder | None = None
    semantic_note: str | None = None  # e.g. "semantic index 40% complete"
    unavailable_reason: str | None = None  # why this vault has no semantic side
    links: LinkGraph | None = None  # aliases, for the title boost (core.search.title_boost)
    vocabulary: VocabVectors | None = None  # the vault's words in the embedding space (core.search.expansion)
    names: NameVectors | None = None  # each note's folders, title and aliases embedded (core.search.name_meaning)
