"""Fusing one request's two lists: the user's fusion (score blend or RRF), weighted by the query's evidence.

`core.search.search` decides *whether* to adapt the blend to the query (hybrid,
blend fusion, no keyword share set by the user); this module measures the keyword
side's evidence over the searched vaults and fuses the lists with the weights it
is given, naming each list in every term.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.base.models import Fusion, SearchMode, SearchSettings, id_order
from core.index.keyword_index import KeywordHit, KeywordIndex
from core.search.evidence import KeywordEvidence, keyword_evidence
from core.search.fusion import Fused, RankedList, ScoredList, fuse_convex, fuse_rrf
from core.search.profiles import Profile, keyword_share


def measure_evidence(
    indexes: Sequence[KeywordIndex], words: Sequence[str], keyword_hits: list[KeywordHit], vector_hits: list[tuple[str, float]]
) -> KeywordEvidence:
    """The keyword list's evidence for this query (core.search.evidence), over every searched vault."""
    text = " ".join(words)
    dfs: dict[str, int] = {}
    docs = 0
    for index in indexes:
        terms = index.query_terms(text) if text.strip() else []
        for term, df in index.doc_frequencies(terms).items():
            dfs[term] = dfs.get(term, 0) + df
        for term in terms:
            dfs.setdefault(term, 0)
        docs += index.doc_count()
    return keyword_evidence(
        dfs,
        docs,
        [h.score for h in keyword_hits],
        [_note_key(h.chunk_id) for h in keyword_hits],
        [_note_key(cid) for cid, _ in vector_hits],
    )


def _note_key(chunk_id: str) -> str:
    rel, _, vault = id_order(chunk_id)
    return f"{vault}/{rel}"


def fuse_lists(
    settings: SearchSettings,
    profile: Profile,
    mode: str,
    keyword_hits: list[KeywordHit],
    vector_hits: list[tuple[str, float]],
    vector_scale: float = 1.0,
    keyword_name: str = "keyword",
    *,
    share: float | None = None,
) -> list[Fused]:
    """Hybrid: the user's fusion (a blend of normalised scores, or RRF); one list: its own order.

    `vector_scale` lowers the vector side's say (0 when the model cannot read the query's language);
    `keyword_name` names the keyword list in every term (with its feedback words, if any);
    `share` (blend) is the keyword list's share when the query's evidence set it.
    """
    hybrid = mode == SearchMode.HYBRID
    if settings.fusion == Fusion.RRF or not hybrid:
        lists = []
        if keyword_hits:
            lists.append(RankedList(keyword_name, profile.keyword_weight if hybrid else 1.0, [h.chunk_id for h in keyword_hits]))
        if vector_hits:
            lists.append(RankedList("vector", (profile.vector_weight * vector_scale) if hybrid else 1.0, [cid for cid, _ in vector_hits]))
        return fuse_rrf(lists, settings.rrf_k)
    share = keyword_share(settings) if share is None else share
    return fuse_convex(
        [
            ScoredList(keyword_name, share, [(h.chunk_id, h.score) for h in keyword_hits], floor_at_min=False),
            ScoredList("meaning", round((1.0 - share) * vector_scale, 6), vector_hits),
        ]
    )
