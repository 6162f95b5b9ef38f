"""Read-only pictures of the engine that the views show, taken off the GUI thread.

Asking the engine for its status can load an embedding model or open an index,
so a worker takes a `VaultSnapshot` per vault and hands it to the GUI thread,
where panels only read plain frozen data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from core.base.vault_state import LiveState, Phase, VaultProgress
from core.engine import Engine
from core.index.manifest import FileRecord
from core.search.bases import find_bases
from core.status import VaultStatus


@dataclass(frozen=True, slots=True)
class VaultSnapshot:
    """One vault as the tree, status bar and health dialog show it.

    Folder counts, tags and types are worked out when the snapshot is made, on the
    query thread: over 10k notes they took the GUI thread ~15 ms per snapshot.
    """

    name: str
    root: str
    status: VaultStatus
    files: dict[str, FileRecord]
    is_obsidian: bool
    bases: tuple[str, ...] = ()  # the vault's `.base` files (Obsidian Bases), shown in the tree
    _folder_counts: dict[str, int] = field(init=False, repr=False, compare=False)
    _tags: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _doc_types: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        counts: dict[str, int] = {"": len(self.files)}
        for rel in self.files:
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                key = "/".join(parts[:i])
                counts[key] = counts.get(key, 0) + 1
        object.__setattr__(self, "_folder_counts", counts)
        object.__setattr__(self, "_tags", tuple(sorted({t for rec in self.files.values() for t in rec.tags})))
        object.__setattr__(self, "_doc_types", tuple(sorted({rec.doc_type for rec in self.files.values() if rec.doc_type})))

    @property
    def note_count(self) -> int:
        return len(self.files)

    def folder_counts(self) -> dict[str, int]:
        """Notes below each folder ('' is the vault itself), counting sub-folders too."""
        return dict(self._folder_counts)

    def tags(self) -> list[str]:
        return list(self._tags)

    def doc_types(self) -> list[str]:
        return list(self._doc_types)


@dataclass(frozen=True, slots=True)
class HealthRow:
    """One line of the index health dialog."""

    vault: str
    rel_path: str
    state: str  # indexed | warning | skipped
    reason: str
    detail: str
    abs_path: str


BASES_TTL_S = 30.0  # snapshots come after every live edit: the vault is walked for Bases at most this often
_bases_seen: dict[str, tuple[float, tuple[str, ...]]] = {}


def vault_bases(root: str) -> tuple[str, ...]:
    """The vault's `.base` files, found by a walk at most every `BASES_TTL_S` seconds."""
    now = time.monotonic()
    seen = _bases_seen.get(root)
    if seen is None or now - seen[0] > BASES_TTL_S:
        seen = _bases_seen[root] = (now, tuple(find_bases(Path(root))))
    return seen[1]


def take_snapshot(engine: Engine) -> tuple[VaultSnapshot, ...]:
    """Status and file list of every vault; runs on a worker thread."""
    statuses = engine.status()
    out = []
    for vc, status in zip(engine.vaults, statuses):
        files = dict(engine.index_for(vc.name).files) if status.built else {}
        bases = vault_bases(vc.root) if status.built else ()
        out.append(VaultSnapshot(vc.name, vc.root, status, files, (Path(vc.root) / ".obsidian").is_dir(), bases))
    return tuple(out)


def health_rows(snapshots: tuple[VaultSnapshot, ...]) -> list[HealthRow]:
    """Every file of every vault: indexed, indexed with a warning, or skipped with the reason."""
    rows: list[HealthRow] = []
    for snap in snapshots:
        root = Path(snap.root)
        warned: dict[str, list[str]] = {}
        codes: dict[str, list[str]] = {}
        for w in snap.status.info.warnings:
            warned.setdefault(w.rel_path, []).append(w.detail)
            codes.setdefault(w.rel_path, []).append(w.code)
        for rel in sorted(snap.files):
            if rel in warned:
                rows.append(HealthRow(snap.name, rel, "warning", ", ".join(codes[rel]), "; ".join(warned[rel]), str(root / rel)))
            else:
                rows.append(HealthRow(snap.name, rel, "indexed", "", "", str(root / rel)))
        for s in snap.status.info.skipped:
            rows.append(HealthRow(snap.name, s.rel_path, "skipped", s.reason.value, s.detail, str(root / s.rel_path)))
    return rows


def describe_status(snap: VaultSnapshot, progress: VaultProgress | None = None) -> tuple[str, str]:
    """A short state word and a sentence for the status bar: ('healthy', 'sample: 36 notes, semantic ready').

    Decided from the typed `VaultProgress` (the running job's when there is one),
    never from the wording of an error.
    """
    p = progress or snap.status.progress()
    if p.phase is Phase.ELSEWHERE:
        return "indexing", p.sentence()  # looked at again on the next status refresh
    if p.phase is Phase.NOT_BUILT or not snap.status.built:
        return "not built", f"{snap.name}: not indexed yet"
    if p.phase in (Phase.KEYWORD, Phase.SCANNING):
        return "indexing", p.sentence()
    if p.phase is Phase.FAILED:
        return "degraded", p.sentence()
    state = "indexing" if p.phase in (Phase.EMBEDDING, Phase.QUEUED, Phase.OCR) else snap.status.info.state
    if state == "healthy" and p.semantic.degraded:
        state = "degraded"
    st = snap.status
    problems = len(st.info.skipped) + len(st.info.warnings)
    extra = f", {problems} to check" if problems else ""
    attached = sum(c.indexed for c in st.attachments)
    notes = st.info.documents - attached
    files = files_text(notes, attached)
    live = "; live updates failing" if p.live is LiveState.FAILED else ""
    return state, f"{snap.name}: {files}, {p.semantic_text()}{_ocr_text(p)}{extra}{live}"


def _ocr_text(p: VaultProgress) -> str:
    """The OCR stage runs after the notes are searchable: said after their state, not instead of it."""
    if p.phase is Phase.OCR:
        return f" · reading images by OCR {p.done}/{p.total}"
    if p.phase is Phase.OCR_PAUSED:
        return f" · reading images paused at {p.done}/{p.total}"
    return ""


def files_text(notes: int, attachments: int) -> str:
    """"36 notes", "36 notes and 7 attachments", "7 attachments" (never "0 notes + 7 attachments")."""
    said = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((notes, "note"), (attachments, "attachment")) if n]
    return " and ".join(said) or "no notes"
