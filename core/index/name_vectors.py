"""What each note is called, in the embedding space: its folders, title and aliases, embedded once per vault.

A documentation page is named for what it answers ("Queries / Comments", "Getting Started
/ Dates"); a question in other words ("write a remark that is ignored") is often nearer to
that name than to any one passage, whose vector also carries the passage's examples. The
search (core.search.name_meaning) compares the query's vector with these and lifts the
notes whose names mean what was asked.

One text per note: its folders (or a dotted name's parts), then its title (`note_name`); a
note's aliases are further names of it. A note at the vault's root with a plain name has no
name here: its title alone was measured to say too little (`names_of`). Stored beside the vault's vectors as `name_vectors.npz` (the names, the note
of each, float16 vectors, the model id); a rebuild embeds only the names it has not seen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

import numpy as np

from core.base.stamp_cache import StampCache
from core.index import vocab_vectors
from core.index.keyword_schema import name_words

FILE_NAME = "name_vectors.npz"


def note_name(rel_path: str, title: str) -> str:
    """The text a note's name is embedded as: its place (folders, a dotted name's parts), then its title.

    "Queries Global Query"; Dendron's `lang.rust.ownership.md` titled "Moving values":
    "lang rust ownership Moving values".
    """
    parts = [name_words(rel_path), title or PurePosixPath(rel_path).stem]
    return " ".join(" ".join(parts).split())


@dataclass(frozen=True)
class NameVectors:
    """Each note's names (one row per name; a note may have several) as unit vectors of one model."""

    model_id: str
    notes: tuple[str, ...]  # the note (rel_path) of each row
    names: tuple[str, ...]  # the embedded text of each row
    matrix: np.ndarray  # (rows, dims), float32, L2-normalised

    @cached_property
    def rows_of(self) -> dict[str, list[int]]:
        """Each note's rows (worked out once per loaded file, not per search)."""
        rows: dict[str, list[int]] = {}
        for i, note in enumerate(self.notes):
            rows.setdefault(note, []).append(i)
        return rows

    def similarities(self, query: np.ndarray, notes: Iterable[str]) -> dict[str, float]:
        """The best cosine between one of each note's names and the (unit) query vector; notes without names left out."""
        rows = self.rows_of
        wanted = {n: rows[n] for n in notes if n in rows}
        if not wanted:
            return {}
        sims = self.matrix @ np.asarray(query, dtype=np.float32).reshape(-1)
        return {n: float(max(sims[i] for i in idx)) for n, idx in wanted.items()}


def names_of(titles: Mapping[str, str], aliases: Callable[[str], Iterable[str]]) -> list[tuple[str, str]]:
    """(note, name) rows: each placed note's folders and title, and each alias with the same folders.

    Only notes with a place (a folder, or a dotted name) are named: a title alone was measured
    to add nothing on the documentation pages and to cost SciFact's flat abstracts (nDCG@10
    0.7153 -> 0.7109), so a vault of loose notes embeds no names at all.
    """
    rows: list[tuple[str, str]] = []
    for rel in sorted(titles):
        if not name_words(rel):
            continue
        seen: set[str] = set()
        for title in (titles[rel], *aliases(rel)):
            name = note_name(rel, title)
            if name and name not in seen:
                seen.add(name)
                rows.append((rel, name))
    return rows


def build(
    rows: list[tuple[str, str]],
    embed: Callable[[list[str]], np.ndarray],
    model_id: str,
    previous: NameVectors | None = None,
    cancel: threading.Event | None = None,
) -> NameVectors | None:
    """Vectors for `rows`, re-using `previous` rows of the same model; None if cancelled."""
    texts = list(dict.fromkeys(name for _, name in rows))
    known = None
    if previous is not None:
        known = vocab_vectors.VocabVectors(previous.model_id, previous.names, previous.matrix)
    built = vocab_vectors.build(texts, embed, model_id, known, cancel)
    if built is None:
        return None
    row_of = {name: i for i, name in enumerate(built.words)}
    if not rows:
        return NameVectors(model_id, (), (), np.zeros((0, 0), dtype=np.float32))
    matrix = np.stack([built.matrix[row_of[name]] for _, name in rows]).astype(np.float32)
    return NameVectors(model_id, tuple(n for n, _ in rows), tuple(name for _, name in rows), matrix)


def save(vectors: NameVectors, folder: Path) -> None:
    """Write atomically beside the vault's vectors (a temp file, then a rename)."""
    tmp = folder / (FILE_NAME + ".tmp.npz")
    np.savez(
        tmp,
        notes=np.array(vectors.notes, dtype=np.str_),
        names=np.array(vectors.names, dtype=np.str_),
        matrix=vectors.matrix.astype(np.float16),
        model=np.array(vectors.model_id, dtype=np.str_),
    )
    tmp.replace(folder / FILE_NAME)


def load(folder: Path) -> NameVectors | None:
    """The stored vectors, or None when there are none (or the file is unreadable: it is rebuilt)."""
    path = folder / FILE_NAME
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            notes = tuple(str(n) for n in data["notes"])
            names = tuple(str(n) for n in data["names"])
            matrix = data["matrix"].astype(np.float32)
            model = str(data["model"])
    except (OSError, ValueError, KeyError):
        return None
    if len(notes) != len(names) or (notes and matrix.shape[0] != len(notes)):
        return None
    return NameVectors(model, notes, names, matrix)


_cache: StampCache[NameVectors] = StampCache(FILE_NAME, load)


def cached(folder: Path) -> NameVectors | None:
    """`load(folder)`, read again only when the file changed (searches call this every time)."""
    return _cache.get(folder)


def refresh(
    folder: Path,
    rows: list[tuple[str, str]],
    embed: Callable[[list[str]], np.ndarray],
    model_id: str,
    cancel: threading.Event | None = None,
) -> bool:
    """Bring the stored names in step with the vault's notes (only new names are embedded); True if written."""
    previous = load(folder)
    if (
        previous is not None
        and previous.model_id == model_id
        and previous.notes == tuple(n for n, _ in rows)
        and previous.names == tuple(name for _, name in rows)
    ):
        return False
    built = build(
        rows, embed, model_id, previous if previous is not None and previous.model_id == model_id else None, cancel
    )
    if built is None:
        return False
    save(built, folder)
    return True
