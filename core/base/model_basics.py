"""The few model names both `core.base.models` and `core.base.search_models` use: the search
enums, a chunk's reference and its id. Apart so that neither of those imports the other
(`core.base.models` re-exports all of these and imports the search models on first use).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SearchMode(StrEnum):
    """How a search retrieves: a StrEnum, so `mode == "hybrid"` and JSON output keep working."""

    HYBRID = "hybrid"
    KEYWORD = "keyword"
    SEMANTIC = "semantic"


class Fusion(StrEnum):
    """How hybrid search merges its keyword and meaning lists (the user's choice in Settings)."""

    BLEND = "blend"  # a weighted sum of each list's normalised scores (the default)
    RRF = "rrf"  # reciprocal rank fusion: weight ÷ (k + rank), scores ignored

    @classmethod
    def parse(cls, value: str) -> Fusion:
        """A fusion by name; "convex" (the blend's older name) is accepted."""
        name = str(value).strip().lower()
        try:
            return cls.BLEND if name == "convex" else cls(name)
        except ValueError:
            raise ValueError(f"unknown fusion {value!r}; choose blend or rrf") from None


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Where a hit's chunk is: vault, note, its place in the note and its heading trail."""

    vault: str
    rel_path: str
    ordinal: int
    heading_path: str

    @property
    def chunk_id(self) -> str:
        return chunk_id(self.vault, self.rel_path, self.ordinal)


_ID_SEP = "\x1f"  # the ASCII unit separator: never in a vault name or a file path


def chunk_id(vault: str, rel_path: str, ordinal: int) -> str:
    """Stable textual id of a chunk: unique across vaults. `split_chunk_id` is its inverse."""
    return f"{vault}{_ID_SEP}{rel_path}{_ID_SEP}{ordinal}"


def split_chunk_id(cid: str) -> tuple[str, str, int]:
    """(vault, rel_path, ordinal) of a chunk id; ValueError if `cid` is not one."""
    parts = cid.split(_ID_SEP)
    if len(parts) != 3 or not parts[2].isdigit():
        raise ValueError(f"not a chunk id: {cid!r}")
    return parts[0], parts[1], int(parts[2])


def id_order(cid: str) -> tuple[str, int, str]:
    """Sort key for ties: note path, then chunk number (2 before 10), then vault."""
    try:
        vault, rel_path, ordinal = split_chunk_id(cid)
    except ValueError:
        return cid, 0, ""
    return rel_path, ordinal, vault
