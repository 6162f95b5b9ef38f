"""A note whose name means what was asked gains a little: the query's vector against each note's name.

Paraphrased questions miss a note when none of its passages is near the question, yet
its name is: "write a remark inside a search block that is ignored" and the page
`Queries/Comments.md`. Each note's folders, title and aliases are embedded once
(core.index.name_vectors); at search time the fused list's first POOL notes are compared
by their names' cosine to the query, min-max scaled over those notes, times WEIGHT, and
the term is named: `name's meaning (0.39) 1.00 × 0.25` (the cosine, its place between
the pool's least and greatest, the weight).

Scaled over the notes already in contention, it re-orders them and never brings in a
note neither list found. Measured (docs/ranking.md): obsidian-tasks-docs hybrid R@1 / R@3
0.575 / 0.850 → 0.700 / 0.875, the Rust book unchanged; a larger weight or a scale
against the pool's median helped the documentation pages more and cost the Rust book,
whose chapter titles say less about the detail asked.

The name speaks only when the two lists leave the question open (`name_weight`): when
every one of the keyword list's first notes is also among the vector list's first ten
(the evidence's agreement, core.search.evidence), the question's words and the meaning of
the passages already point at the same notes, and a name that merely holds a word of
the question ("parallel", "cargo-check" on command pages) would lift the wrong one of
them over the page that answers ("xargs", "bacon"). The paraphrases the term is for are
those whose words are elsewhere in the vault, where the lists disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from core.base.models import Term, id_order, split_chunk_id
from core.search.evidence import KeywordEvidence
from core.search.fusion import Fused
from core.search.sides import VaultSearchSide

if TYPE_CHECKING:
    import numpy as np

WEIGHT = 0.25  # the most a note's name adds, in the blend's units (a list's best hit adds up to its share, ~0.5)
POOL = 30  # notes of the fused list compared (and scaled over)
AGREED = 1.0  # the evidence's agreement at which the lists are taken to have settled the question


def name_weight(evidence: KeywordEvidence, weight: float = WEIGHT) -> float:
    """The term's weight for one query: `weight`, or 0 when both lists agree on the keyword side's first notes.

    Agreement is the one evidence signal that told the two kinds of question apart (the
    measurements are in docs/ranking.md, "Round 4, fourth session"); it adds no parameter.
    """
    return 0.0 if evidence.agreement >= AGREED else weight


def name_terms(
    fused: Sequence[Fused],
    similarities: Callable[[str, list[str]], dict[str, float] | None],
    *,
    weight: float = WEIGHT,
    pool: int = POOL,
) -> list[Fused]:
    """`fused` (best first) with a named term on each chunk of the first `pool` notes, by its note's name.

    `similarities(vault, notes)` gives those notes' name cosines to the query in that vault
    (None: the vault has no name vectors). Fewer than two notes with names: unchanged.
    """
    order = sorted(fused, key=lambda f: (-f.score, *id_order(f.chunk_id)))
    if weight <= 0 or not order:
        return order
    notes = list(dict.fromkeys(_note(f.chunk_id) for f in order))[:pool]
    found: dict[tuple[str, str], float] = {}
    for vault in dict.fromkeys(v for v, _ in notes):
        wanted = [rel for v, rel in notes if v == vault]
        sims = similarities(vault, wanted) or {}
        found.update({(vault, rel): sims[rel] for rel in wanted if rel in sims})
    if len(found) < 2:
        return order
    lo, hi = min(found.values()), max(found.values())
    if hi - lo <= 1e-9:
        return order
    out: list[Fused] = []
    for f in order:
        note = _note(f.chunk_id)
        sim = found.get(note)
        if sim is not None:
            share = (sim - lo) / (hi - lo)
            value = weight * share
            f = Fused(
                f.chunk_id,
                f.score + value,
                (*f.terms, Term(f"name's meaning ({sim:.2f}) {share:.2f} × {weight:g}", value)),
            )
        out.append(f)
    out.sort(key=lambda f: (-f.score, *id_order(f.chunk_id)))
    return out


def side_similarities(
    sides: Sequence[VaultSearchSide], query_vectors: Mapping[int, np.ndarray]
) -> Callable[[str, list[str]], dict[str, float] | None]:
    """`similarities` for `name_terms` over the searched vaults: None for a vault without name vectors."""
    by_name = {s.name: s for s in sides}

    def similarities(vault: str, notes: list[str]) -> dict[str, float] | None:
        side = by_name.get(vault)
        if side is None or side.names is None or side.embedder is None:
            return None
        qvec = query_vectors.get(id(side.embedder))
        return None if qvec is None else side.names.similarities(qvec, notes)

    return similarities


def _note(cid: str) -> tuple[str, str]:
    vault, rel, _ = split_chunk_id(cid)
    return vault, rel
