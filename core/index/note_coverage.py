"""How many notes have a vector while a vault's passages are still being embedded.

The share of passages embedded (`VaultVectors.fraction_complete`) leaves out each note's
summary vector from the first pass (`core.index.note_vectors`): it is not any passage's
vector. So after that pass a vault that semantic search covers note by note read "semantic
index 0% complete". `note_cover` counts the notes: every view (status bar, `cairn status`,
MCP status, search warnings) then says "every note has a summary vector; passages 12% embedded".

Apart from `core.index.vector_store` (at its size limit) and only imported for a vault whose
passages are not all embedded.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Protocol

from core.base.vault_state import NoteCover
from core.index.embed_text import NO_VECTOR
from core.index.manifest import FileRecord
from core.index.note_vectors import is_provisional


class _Versioned(Protocol):
    @property
    def version(self) -> int: ...


class Vectors(Protocol):
    """What is read of `core.index.vector_store.VaultVectors` (numpy is not imported here)."""

    key_hash: dict[int, str]

    @property
    def index(self) -> _Versioned: ...

    def _key(self, rel: str, ordinal: int) -> int: ...


# Counted once per (vector index version, manifest): a status refresh and every search of a
# vault being embedded ask, and counting walks every chunk (~10 ms at 30k chunks).
_counted: weakref.WeakKeyDictionary[object, tuple[tuple[int, int, int], NoteCover]] = weakref.WeakKeyDictionary()


def note_cover(vv: Vectors, files: Mapping[str, FileRecord]) -> NoteCover:
    """The notes of `files` with a passage to embed, those with any vector, those with only a summary."""
    stamp = (vv.index.version, id(files), len(files))
    hit = _counted.get(vv)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    notes = with_vector = summaries = 0
    key_hash = vv.key_hash
    for rel, rec in list(files.items()):
        hashes = [key_hash.get(vv._key(rel, c.ordinal)) for c in rec.chunks if not c.text_hash.startswith(NO_VECTOR)]
        if not hashes:
            continue
        notes += 1
        present = [h for h in hashes if h is not None]
        if present:
            with_vector += 1
            summaries += all(is_provisional(h) for h in present)
    cover = NoteCover(notes, with_vector, summaries)
    _counted[vv] = (stamp, cover)
    return cover
