"""A vault check-up: what a tidy-minded reader would fix, found from the index alone.

Five lists, each item pointing at a place the app can open: links that reach no note,
notes nothing links to and that link nowhere, pairs of notes alike in meaning that do not
link each other (with the two passages most alike), near-duplicate notes (the same passages,
or nearly the same meaning throughout), and properties whose type differs between notes.
Read-only: the vault is never written, and no note is read (manifest, link graph, vectors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from core.base.confidentiality import is_restricted
from core.base.models import chunk_id
from core.index.property_stats import notes_by_type, property_stats
from core.index.vector_index import key_for
from core.vault.attachments import attachment_kind

if TYPE_CHECKING:
    from core.engine import Engine
    from core.index.indexer import VaultIndex
    from core.index.manifest import FileRecord
    from core.index.vector_store import VaultVectors

SIMILAR_MIN = 0.80  # mean-vector cosine above which two unlinked notes are worth a look
DUPLICATE_MIN = 0.97  # ... and above which they say the same thing
SHARED_CHUNKS_MIN = 0.5  # share of a note's passages found word for word in another
MAX_ITEMS = 50  # per list
BLOCK = 512  # notes compared at once (memory: BLOCK x notes floats)


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One finding: its kind, the note it is about (and the line), what is wrong, and more detail."""

    kind: str  # broken_link | orphan | unlinked_similar | near_duplicate | inconsistent_property
    rel_path: str
    line: int = 0
    message: str = ""
    other: str = ""  # the second note of a pair
    score: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Checkup:
    vault: str
    items: tuple[CheckItem, ...]
    notes: tuple[str, ...] = ()  # what could not be checked and why

    def of(self, kind: str) -> list[CheckItem]:
        return [i for i in self.items if i.kind == kind]


def vault_checkup(engine: Engine, vault: str, only: dict[str, FileRecord] | None = None) -> Checkup:
    """Every check on one vault; the meaning-based ones only when its vectors are built.

    `only` narrows it to some notes (an agent's scope): nothing outside them is reported,
    compared or counted, and a link from outside does not keep a note from being an orphan.
    """
    vi = engine.index_for(vault)
    files = {rel: rec for rel, rec in (vi.files if only is None else only).items() if not is_restricted(rec.confidentiality)}
    hidden = frozenset() if only is None else frozenset(vi.files) - files.keys()
    items = broken_links(vi, files) + orphans(vi, files, hidden) + inconsistent_properties(files) + shared_passages(vi, files)
    notes: list[str] = []
    vv = engine.vectors_for(vault)
    if vv is None or len(vv.index) == 0:
        notes.append("similar and near-duplicate notes by meaning need embeddings: run `cairn index` without --no-embed")
    else:
        found = {(i.rel_path, i.other) for i in items if i.kind == "near_duplicate"}
        items += [i for i in by_meaning(vi, vv, vault, files) if (i.rel_path, i.other) not in found]
    return Checkup(vault, tuple(items), tuple(notes))


def broken_links(vi: VaultIndex, files: dict[str, FileRecord]) -> list[CheckItem]:
    out = [
        CheckItem("broken_link", r.source, r.link.line, f"[[{r.link.target}]] reaches no note", detail={"target": r.link.target})
        for r in vi.links.unresolved()
        if r.source in files
    ]
    return sorted(out, key=lambda i: (i.rel_path, i.line))


def orphans(vi: VaultIndex, files: dict[str, FileRecord], hidden: frozenset[str] = frozenset()) -> list[CheckItem]:
    out = []
    for rel in sorted(files):
        if attachment_kind(rel) is None and not vi.links.neighbours(rel) - hidden:
            out.append(CheckItem("orphan", rel, message="no note links here, and it links to no note"))
    return out


def inconsistent_properties(files: dict[str, FileRecord]) -> list[CheckItem]:
    out = []
    for stats in property_stats(files):
        if stats.consistent:
            continue
        by_type = notes_by_type(files, stats.key)
        main_type = stats.types[0][0]
        counts = ", ".join(f"{t} in {n}" for t, n in stats.types)
        for kind, rels in by_type.items():
            if kind == main_type:
                continue
            for rel in rels[:MAX_ITEMS]:
                message = f"property {stats.key!r} is {kind} here; {counts} notes"
                out.append(CheckItem("inconsistent_property", rel, message=message, detail={"key": stats.key, "type": kind, "usual": main_type}))
    return out


def shared_passages(vi: VaultIndex, files: dict[str, FileRecord]) -> list[CheckItem]:
    """Notes whose paragraphs are largely found word for word in another note (a copy, a stale draft)."""
    paragraphs: dict[str, set[str]] = {}
    for chunk in vi.keyword.all_stored():
        if chunk.rel_path in files and attachment_kind(chunk.rel_path) is None:
            paragraphs.setdefault(chunk.rel_path, set()).update(_paragraphs(chunk.body))
    owners: dict[str, set[str]] = {}
    for rel, paras in paragraphs.items():
        for p in paras:
            owners.setdefault(p, set()).add(rel)
    out = []
    for rel, paras in sorted(paragraphs.items()):
        counts: dict[str, int] = {}
        for p in paras:
            for other in owners[p] - {rel}:
                counts[other] = counts.get(other, 0) + 1
        for other, n in sorted(counts.items()):
            share = n / len(paras)
            if share >= SHARED_CHUNKS_MIN and (rel < other or n / len(paragraphs[other]) < SHARED_CHUNKS_MIN):
                message = f"{n} of its {len(paras)} lines are also in {other}"
                out.append(CheckItem("near_duplicate", rel, other=other, score=round(share, 4), message=message, detail={"how": "same lines"}))
    return out[:MAX_ITEMS]


def _paragraphs(body: str) -> set[str]:
    """A chunk's lines, normalised; headings and short lines say too little to compare."""
    out = set()
    for block in body.splitlines():
        text = " ".join(block.split()).lower()
        if len(text) >= 40 and not text.startswith("#"):
            out.add(text)
    return out


def by_meaning(vi: VaultIndex, vv: VaultVectors, vault: str, files: dict[str, FileRecord]) -> list[CheckItem]:
    """Unlinked pairs alike in meaning, and near-duplicates by meaning, best first."""
    rels, chunk_vecs = _note_vectors(vv, vault, files)
    if len(rels) < 2:
        return []
    centres = np.stack([v.mean(axis=0) for v in chunk_vecs])
    centres /= np.linalg.norm(centres, axis=1, keepdims=True).clip(1e-9)
    pairs: list[tuple[float, int, int]] = []
    for start in range(0, len(rels), BLOCK):
        sims = centres[start : start + BLOCK] @ centres.T
        rows, cols = np.nonzero(sims >= SIMILAR_MIN)
        pairs.extend((float(sims[r, c]), start + int(r), int(c)) for r, c in zip(rows, cols, strict=True) if start + r < c)
    pairs.sort(reverse=True)
    out = []
    for score, a, b in pairs:
        ra, rb = rels[a], rels[b]
        duplicate = score >= DUPLICATE_MIN
        if not duplicate and (rb in vi.links.neighbours(ra)):
            continue
        passages = _best_passages(vi, vault, files, (ra, rb), (chunk_vecs[a], chunk_vecs[b]))
        kind = "near_duplicate" if duplicate else "unlinked_similar"
        message = f"nearly the same meaning as {rb}" if duplicate else f"similar to {rb}, but neither links the other"
        out.append(CheckItem(kind, ra, other=rb, score=round(score, 4), message=message, detail={"passages": passages}))
        if len(out) >= 2 * MAX_ITEMS:
            break
    return out


def _note_vectors(vv: VaultVectors, vault: str, files: dict[str, FileRecord]) -> tuple[list[str], list[np.ndarray]]:
    """Each note's chunk vectors, in chunk order; a note not fully embedded yet is left out."""
    rels: list[str] = []
    vecs: list[np.ndarray] = []
    for rel in sorted(files):
        if attachment_kind(rel) is not None or not files[rel].chunks:
            continue
        found = [vv.index.vector(key_for(chunk_id(vault, rel, c.ordinal))) for c in files[rel].chunks]
        if all(v is not None for v in found):
            rels.append(rel)
            vecs.append(np.asarray(found, dtype=np.float32))
    return rels, vecs


def _best_passages(
    vi: VaultIndex, vault: str, files: dict[str, FileRecord], pair: tuple[str, str], vecs: tuple[np.ndarray, np.ndarray]
) -> list[dict[str, Any]]:
    """The two chunks (one of each note) most alike: what the notes share, with their text."""
    sims = vecs[0] @ vecs[1].T
    i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
    picked = [(pair[0], files[pair[0]].chunks[int(i)]), (pair[1], files[pair[1]].chunks[int(j)])]
    stored = vi.keyword.stored([chunk_id(vault, rel, c.ordinal) for rel, c in picked])
    out = []
    for rel, c in picked:
        found = stored.get(chunk_id(vault, rel, c.ordinal))
        text = " ".join(found.body.split())[:300] if found is not None else ""
        out.append({"rel_path": rel, "ordinal": c.ordinal, "heading": c.heading_path, "start_byte": c.start_byte, "end_byte": c.end_byte, "text": text})
    return out


def checkup_json(result: Checkup) -> dict[str, Any]:
    kinds = ("broken_link", "orphan", "unlinked_similar", "near_duplicate", "inconsistent_property")
    return {
        "vault": result.vault,
        "notes": list(result.notes),
        "counts": {k: len(result.of(k)) for k in kinds},
        "items": [
            {"kind": i.kind, "rel_path": i.rel_path, "line": i.line, "message": i.message, "other": i.other or None, "score": i.score, **i.detail}
            for i in result.items
        ],
    }
