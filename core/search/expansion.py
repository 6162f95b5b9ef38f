"""Vocabulary gaps, offline: the vault's own words nearest to the query's meaning, searched beside the typed ones.

The query's vector (already computed for the vector list) is compared with the
vault's distinctive words embedded by the same model (core.index.vocab_vectors):
the nearest few that are not the query's own words are added to the keyword
search at a small weight, and named in the breakdown ("also searched: comment,
postpone"). A word the index holds under one of the query's terms is skipped
(it is already searched), and so is a second word with the same term.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from core.index.vocab_vectors import VocabVectors

EXPANSION_WORDS = 3  # words added per query
EXPANSION_FLOOR = 0.40  # the least cosine between the query and a word for it to be added
EXPANSION_WEIGHT = 0.3  # the nearest word's weight; a typed word weighs 1


@dataclass(frozen=True, slots=True)
class Expansion:
    """Index terms to search beside the typed ones (term → weight) and the words they came from."""

    terms: dict[str, float] = field(default_factory=dict)
    words: tuple[str, ...] = ()


def vocabulary_expansion(
    vocab: VocabVectors,
    query_vector: np.ndarray,
    query_terms: Collection[str],
    analyse: Callable[[str], list[str]],
    *,
    words: int = EXPANSION_WORDS,
    floor: float = EXPANSION_FLOOR,
    weight: float = EXPANSION_WEIGHT,
) -> Expansion:
    """The vault words nearest to `query_vector` as weighted index terms (nearest at `weight`, others less)."""
    if words <= 0 or weight <= 0:
        return Expansion()
    terms: dict[str, float] = {}
    chosen: list[str] = []
    top = 0.0
    for word, sim in vocab.nearest(query_vector, words * 5, floor):
        analysed = analyse(word)
        if len(analysed) != 1 or analysed[0] in query_terms or analysed[0] in terms:
            continue
        top = top or sim
        terms[analysed[0]] = round(weight * sim / top, 4)
        chosen.append(word)
        if len(chosen) >= words:
            break
    return Expansion(terms, tuple(chosen))
