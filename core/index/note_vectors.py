"""Semantic search in the first minute: one short vector per note before any passage's.

A just-added vault is searchable by keywords in seconds, but embedding every passage takes
minutes (a 1,000-note vault has ~3-6k chunks). So a first pass embeds one short text per
note — its title, aliases, headings and the start of its opening passage, about 80 tokens —
newest notes first. Its vector is stored under the key of the note's opening passage with a
provisional hash (`PROVISIONAL` + that passage's hash): searches find the note through it at
once, and the passage pass that follows replaces it with the passage's own vector (the hash
no longer matches, so the key counts as missing). A provisional vector is never cached: it
stands in for a while and is not the vector of any chunk.

Measured on 256 opening passages of a 1,000-note Obsidian-shaped vault (~710 characters
each): 81 ms of CPU per opening passage, 27 ms per 200-character text — attention and the
feed-forward layers grow with the tokens, so the short text makes the first pass ~3x faster.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from core.index.embed_text import NO_VECTOR
from core.index.manifest import ChunkRecord, FileRecord

if TYPE_CHECKING:
    import numpy as np

PROVISIONAL = "note:"  # key_hash prefix of a note's stand-in vector (see the module docstring)
NOTE_PHASE = "note vectors"  # the progress phase of the first pass: (notes done, notes to embed)
NOTE_INPUT_CHARS = 320  # ~80 tokens of English: the title, aliases, headings and the opening's start
_HEADINGS_CHARS = 120  # the headings' share, so a long outline leaves room for the opening's words
_OPENING_MIN_BYTES = 120  # a chunk shorter than this is a heading or a line, not a note's opening
_DIRECT_BYTES = 2 * NOTE_INPUT_CHARS  # a note's only passage up to this is embedded at once, with no stand-in
EMBED_GROUP = 32  # texts per embed call: the unit of progress, cancel and visibility

Wanted = dict[int, tuple[str, int, str]]  # key -> (rel_path, ordinal, text hash)
NoteTexts = Callable[[list[tuple[str, int]]], dict[str, str]]  # [(rel, opening ordinal)] -> rel -> text


class VaultVectors(Protocol):
    """What the note pass needs of `core.index.vector_store.VaultVectors` (which imports this module)."""

    key_hash: dict[int, str]

    def _still_missing(self, keys: list[int], wanted: Wanted, current: Callable[[], dict[str, FileRecord]] | None) -> list[int]: ...

    def add_rows(self, rows: list[tuple[int, np.ndarray]], hash_of: Callable[[int], str]) -> None: ...


def note_input(title: str, aliases: tuple[str, ...], headings: list[str], opening: str) -> str:
    """A note's short text for its first vector: what it is called, its outline, how it starts.

    Cut at a word boundary within `NOTE_INPUT_CHARS`, so it stays far inside the model's
    window (MiniLM reads 256 tokens) and costs a third of an opening passage to embed.
    """
    names = " · ".join(dict.fromkeys(n for n in (title, *aliases) if n))
    outline = _cut(" · ".join(dict.fromkeys(h for h in headings if h and h != title)), _HEADINGS_CHARS)
    head = "\n".join(p for p in (names, outline) if p)
    room = NOTE_INPUT_CHARS - len(head) - 1
    body = _cut(" ".join(opening.split()), room) if room > 0 else ""
    return f"{head}\n{body}" if head and body else head or body


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut


def note_headings(chunks: tuple[ChunkRecord, ...]) -> list[str]:
    """The note's headings in order, each once (the last part of every chunk's heading path)."""
    return list(dict.fromkeys(c.heading_path.split(" > ")[-1] for c in chunks if c.heading_path))


def opening(chunks: list[ChunkRecord]) -> int:
    """The ordinal of a note's opening passage: its first chunk with more than a heading in it."""
    return next((c.ordinal for c in chunks if c.end_byte - c.start_byte >= _OPENING_MIN_BYTES), chunks[0].ordinal)


def openings(files: dict[str, FileRecord], notes: set[str] | None = None) -> dict[str, int]:
    """Each note's opening passage (among its chunks that get a vector)."""
    out = {}
    for rel in files if notes is None else notes:
        worthy = [c for c in files[rel].chunks if not c.text_hash.startswith(NO_VECTOR)]
        if worthy:
            out[rel] = opening(worthy)
    return out


def embedding_order(wanted: Wanted, files: dict[str, FileRecord]) -> Callable[[int], tuple[bool, bool, int, str, int]]:
    """The order passages are embedded in: every note's opening first, then the rest; recent notes first.

    A note's opening passage (with its title and heading) finds the note by meaning about as
    well as all of its chunks do for most questions, and there are several times fewer of them.
    The passages of notes the note pass gives no stand-in lead (`gets_stand_in`): until they
    are embedded those notes are the ones semantic search cannot find at all. Within each group
    the most recently edited notes go first: they are the ones a user is about to search for.
    """
    first = openings(files, {rel for rel, _, _ in wanted.values()})
    stand_in = gets_stand_in(wanted, files)

    def key(k: int) -> tuple[bool, bool, int, str, int]:
        rel, ordinal, _ = wanted[k]
        return (ordinal != first.get(rel), rel in stand_in, -files[rel].mtime_ns, rel, ordinal)

    return key


def gets_stand_in(wanted: Wanted, files: dict[str, FileRecord]) -> set[str]:
    """The notes the note pass gives a stand-in: more than one passage to embed, or one long one.

    A passage up to `_DIRECT_BYTES` costs about as much to embed as a stand-in (MiniLM's cost
    grows with the tokens), so such a note is better embedded once, by its passage.
    """
    sizes: dict[str, int] = {}
    for rel, ordinal, _ in wanted.values():
        sizes[rel] = _DIRECT_BYTES + 1 if rel in sizes else _passage_bytes(files[rel], ordinal)
    return {rel for rel, size in sizes.items() if size > _DIRECT_BYTES}


def _passage_bytes(rec: FileRecord, ordinal: int) -> int:
    return next((c.end_byte - c.start_byte for c in rec.chunks if c.ordinal == ordinal), 0)


def is_provisional(text_hash: str | None) -> bool:
    return text_hash is not None and text_hash.startswith(PROVISIONAL)


def notes_without_vectors(vv: VaultVectors, wanted: Wanted, files: dict[str, FileRecord]) -> list[tuple[str, int]]:
    """(note, key of its opening) for every note none of whose chunks has a vector yet; newest first.

    A note whose one passage is short is left to the passage pass (it leads that pass, see
    `embedding_order`): a stand-in would cost about as much as the passage and then be replaced
    by the passage's vector (tldr: 6,417 pages, 6,934 chunks). A long single passage gets one.
    """
    covered = {wanted[k][0] for k in vv.key_hash if k in wanted}
    todo = gets_stand_in(wanted, files) - covered
    first = openings(files, todo)
    keys = {(rel, o): k for k, (rel, o, _) in wanted.items() if first.get(rel) == o}
    ordered = sorted(first, key=lambda rel: (-files[rel].mtime_ns, rel))
    return [(rel, keys[(rel, first[rel])]) for rel in ordered]


def embed_note_pass(
    vv: VaultVectors,
    wanted: Wanted,
    files: dict[str, FileRecord],
    note_texts: NoteTexts,
    embed: Callable[[list[str]], np.ndarray],
    hold: Callable[[], AbstractContextManager[object]],
    current: Callable[[], dict[str, FileRecord]] | None,
    progress: Callable[[int, int, str], None] | None = None,
    cancel: threading.Event | None = None,
) -> tuple[int, bool]:
    """Give every note without a vector its short note vector; (vectors added, cancelled?)."""
    import numpy as np  # here, not at import: `core.semantic` imports this module for keyword searches too

    todo = notes_without_vectors(vv, wanted, files)
    added = 0
    for start in range(0, len(todo), EMBED_GROUP):
        if cancel is not None and cancel.is_set():
            return added, True
        with hold():
            group = vv._still_missing([k for _, k in todo[start : start + EMBED_GROUP]], wanted, current)
            texts = note_texts([(wanted[k][0], wanted[k][1]) for k in group]) if group else {}
        keys = [k for k in group if wanted[k][0] in texts]
        if keys:
            vecs = np.asarray(embed([texts[wanted[k][0]] for k in keys]), dtype=np.float32).astype(np.float16).astype(np.float32)
            with hold():
                fresh = set(vv._still_missing(keys, wanted, current))
                rows = [(k, v) for k, v in zip(keys, vecs) if k in fresh and k not in vv.key_hash]
                vv.add_rows(rows, lambda k: PROVISIONAL + wanted[k][2])
            added += len(rows)
        if progress is not None:
            progress(min(start + EMBED_GROUP, len(todo)), len(todo), NOTE_PHASE)
    return added, False
