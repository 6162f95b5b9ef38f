"""The properties in use in a vault: keys, their types and values, with note counts.

Read from the manifest's property terms (`core.index.property_terms`), so listing costs no
note reads. Feeds `cairn properties`, the app's property facet and the check-up's
"inconsistent types" (a key that is a number in 40 notes and text in 3).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from core.index.manifest import FileRecord
from core.index.property_terms import TASK_KEY, decode_term

KIND_NAMES = {"t": "text", "l": "list", "n": "number", "d": "date", "b": "checkbox"}
MAX_VALUES = 200  # per key in a listing: a facet or a terminal shows no more


@dataclass(frozen=True, slots=True)
class KeyStats:
    """One property key: how many notes have it, as which types, and its commonest values."""

    key: str
    notes: int
    types: tuple[tuple[str, int], ...]  # (type, notes), most notes first
    values: tuple[tuple[str, int], ...]  # (value, notes), most notes first

    @property
    def consistent(self) -> bool:
        return len(self.types) <= 1


def property_stats(files: Mapping[str, FileRecord], key: str | None = None, max_values: int = MAX_VALUES) -> list[KeyStats]:
    """Every key in use (or only `key`), most-used first; task states are not properties."""
    wanted = key.strip().lower() if key else None
    notes: Counter[str] = Counter()
    types: dict[str, Counter[str]] = {}
    values: dict[str, Counter[str]] = {}
    for rec in files.values():
        seen_types: set[tuple[str, str]] = set()
        for term in rec.props:
            decoded = decode_term(term)
            if decoded is None:
                if term != TASK_KEY and (wanted is None or term == wanted):
                    notes[term] += 1
                continue
            k, kind, value = decoded
            if k == TASK_KEY or (wanted is not None and k != wanted):
                continue
            values.setdefault(k, Counter())[value] += 1
            seen_types.add((k, KIND_NAMES.get(kind, kind)))
        for k, kind_name in seen_types:
            types.setdefault(k, Counter())[kind_name] += 1
    out = [
        KeyStats(k, n, tuple(types.get(k, Counter()).most_common()), tuple(values.get(k, Counter()).most_common(max_values)))
        for k, n in notes.items()
    ]
    out.sort(key=lambda s: (-s.notes, s.key))
    return out


def notes_by_type(files: Mapping[str, FileRecord], key: str) -> dict[str, list[str]]:
    """For one key: type name -> the notes whose value has that type (for the check-up)."""
    out: dict[str, list[str]] = {}
    prefix = key + "="
    for rel, rec in sorted(files.items()):
        kinds = {t[len(prefix)] for t in rec.props if t.startswith(prefix) and len(t) > len(prefix)}
        for kind in kinds:
            out.setdefault(KIND_NAMES.get(kind, kind), []).append(rel)
    return out
