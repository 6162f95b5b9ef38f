"""Notes similar to a note: the mean of its chunk vectors against every chunk of the vault."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.base.confidentiality import is_restricted
from core.base.errors import IndexNotBuiltError, RestrictedNoteError, UsageError
from core.base.models import SearchFilters, chunk_id, split_chunk_id
from core.index.vector_index import key_for
from core.vault.scanner import normalise_rel_path

if TYPE_CHECKING:
    from core.index.indexer import VaultIndex
    from core.index.vector_store import VaultVectors


def similar_notes(
    vi: VaultIndex, vv: VaultVectors | None, name: str, rel_path: str, k: int = 10, *, allow_restricted: bool = False
) -> list[tuple[str, str, float]]:
    """Other notes nearest to this one: the mean of its chunk vectors against every chunk.

    A restricted note is refused as the query unless allowed: which notes resemble it says
    something about what it holds. Restricted notes are left out of the results likewise.

    Raises:
        RestrictedNoteError: the note is restricted and `allow_restricted` is False.
    """
    rel = normalise_rel_path(rel_path)
    rec = vi.files.get(rel)
    if rec is None:
        raise UsageError(f"{rel_path} is not an indexed note of vault {name!r}")
    if is_restricted(rec.confidentiality) and not allow_restricted:
        raise RestrictedNoteError(f"{name}/{rel} is marked confidentiality: restricted; it is not used unless allowed (--allow-restricted)")
    if vv is None or len(vv.index) == 0:
        raise IndexNotBuiltError(f"No embeddings for vault {name!r} yet — run `cairn index` (without --no-embed)")
    vecs = [v for c in rec.chunks if (v := vv.index.vector(key_for(chunk_id(name, rel, c.ordinal)))) is not None]
    if not vecs:
        raise IndexNotBuiltError(f"{rel_path} has no embeddings yet")
    centre = np.mean(vecs, axis=0)
    centre /= np.linalg.norm(centre) or 1.0
    best: dict[str, float] = {}
    for cid, score in vv.search(centre, SearchFilters(allow_restricted=allow_restricted), max(50, k * 10), vi.files):
        other = split_chunk_id(cid)[1]
        if other != rel and score > best.get(other, -2.0):
            best[other] = score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    return [(r, vi.files[r].title if r in vi.files else r, s) for r, s in ranked]
