"""One vault's state as every view reports it: the phase, how far along, and why.

Before this, the status bar showed the current run's embedding count ("embedding
5 %") beside the search's share of the vault embedded ("semantic index 60 %
complete"), and the desktop decided what was wrong by matching words in error
messages. Now the semantic status is an enum, the reason a separate sentence,
and the percentage always the share of the vault's chunks that have a vector,
whoever shows it (status bar, Index health, search and Ask warnings, the CLI).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SemanticState(StrEnum):
    """Whether a vault can be searched by meaning. String values, so JSON and old callers read them."""

    OK = "ok"  # every chunk has its vector
    PARTIAL = "partial"  # some chunks have vectors: semantic results cover part of the vault
    EMPTY = "empty"  # nothing to embed (no notes, or none the embedder may see)
    MISSING = "missing"  # no vectors yet
    MODEL_MISMATCH = "model_mismatch"  # vectors from another model: rebuilt on the next index
    REBUILT = "rebuilt"
    UNAVAILABLE = "unavailable"  # the embedder cannot run (see the reason)
    OFF = "off"  # turned off by the user: keyword search is all there is, and that is fine

    @property
    def degraded(self) -> bool:
        """Search works but is worse than the user asked for."""
        return self in (SemanticState.PARTIAL, SemanticState.MISSING, SemanticState.MODEL_MISMATCH, SemanticState.UNAVAILABLE)


class Phase(StrEnum):
    """What is happening to a vault right now."""

    NOT_BUILT = "not built"  # never indexed; nothing to search
    ELSEWHERE = "indexed elsewhere"  # another Cairn process builds it; shown and looked at again later
    QUEUED = "queued"  # waits for another vault's indexing
    SCANNING = "scanning"  # an index job started; the notes are being listed
    KEYWORD = "keyword"  # reading notes into the keyword index
    EMBEDDING = "embedding"  # computing vectors; keyword search already works
    OCR = "ocr"  # reading images and scans by OCR, last (core.ocr_stage); the notes are searchable
    PAUSED = "paused"  # embedding was cancelled part-way: keyword search works, Resume finishes it
    OCR_PAUSED = "ocr paused"  # OCR was cancelled part-way: every note is searchable, Resume reads the rest
    FAILED = "failed"  # the index job failed (see the reason)
    READY = "ready"

    @property
    def busy(self) -> bool:
        """An index job works on the vault now."""
        return self in (Phase.SCANNING, Phase.KEYWORD, Phase.EMBEDDING, Phase.OCR, Phase.QUEUED, Phase.ELSEWHERE)


class LiveState(StrEnum):
    """Whether edits on disk reach the index on their own."""

    OFF = "off"
    WAITING = "waiting"  # watched; changes queue until the keyword index exists
    LIVE = "live"
    FAILED = "failed"  # the watcher reported an error (see the reason); it restarts itself


@dataclass(frozen=True, slots=True)
class NoteCover:
    """How many notes semantic search can find while their passages are still being embedded.

    The first embedding pass gives each note one short summary vector (`core.index.note_vectors`)
    that is not any passage's vector, so the share of passages embedded stays at 0% while every
    note is already found by meaning. Reporting only that share told the user "semantic index 0%
    complete" about a vault that semantic search covered note by note.
    """

    notes: int = 0  # notes with a passage to embed
    with_vector: int = 0  # of them, notes with any vector: a passage's own or a summary
    summaries: int = 0  # of them, notes whose only vector is the summary

    @property
    def every_note(self) -> bool:
        return self.notes > 0 and self.with_vector >= self.notes

    def notes_words(self) -> str:
        """'every note has a summary vector', '412 of 1,000 notes have a vector', or "" (no note has one)."""
        if self.every_note:
            return "every note has a summary vector" if self.summaries else "every note has a vector"
        return f"{self.with_vector:,} of {self.notes:,} notes have a vector" if self.with_vector else ""

    def words(self, passages_percent: int) -> str:
        """'every note has a summary vector; passages 12% embedded': the same words in every view."""
        head = self.notes_words()
        return f"{head}; passages {passages_percent}% embedded" if head else f"{passages_percent}% of passages embedded"


@dataclass(frozen=True, slots=True)
class VaultProgress:
    """The one source of truth for a vault's phase and percentage.

    `done`/`total` count notes in the keyword phase and chunks otherwise, so in the
    embedding phase and after it `percent` is the share of the vault embedded.
    """

    vault: str
    phase: Phase
    done: int = 0
    total: int = 0
    semantic: SemanticState = SemanticState.MISSING
    reason: str = ""  # why semantic search is not OK, in words for the user
    live: LiveState = LiveState.OFF
    live_reason: str = ""
    eta: str = ""  # "about 3 min left", from the running job's measured rate ("" when unknown)
    cover: NoteCover = NoteCover()  # notes with a vector, while the passages are not all embedded
    note_pass: bool = False  # the embedding phase's first pass: `done`/`total` count notes, not chunks

    @property
    def percent(self) -> int:
        if self.total <= 0:
            return 100 if self.phase is Phase.READY else 0
        return min(100, int(self.done * 100 / self.total))

    def semantic_text(self) -> str:
        """'semantic ready', 'embedding 60%', 'keyword only (semantic search is turned off)'.

        While vectors are being computed, or after a cancel left them part-way, it says
        so: never "unavailable" for a vault whose embedding is under way.
        """
        if self.phase is Phase.EMBEDDING:
            return self._embedding_words(f"{self.percent}%")
        if self.phase is Phase.PAUSED:
            return f"embedding paused; {self.cover.words(self.percent)}" if self.cover.with_vector else f"embedding paused at {self.percent}%"
        if self.semantic is SemanticState.OK:
            return "semantic ready"
        if self.semantic is SemanticState.PARTIAL:
            return f"semantic: {self.cover.words(self.percent)}" if self.cover.with_vector else f"semantic {self.percent}%"
        if self.semantic is SemanticState.OFF:
            return "keyword only"
        if self.semantic is SemanticState.EMPTY:
            return "nothing to embed"
        return f"keyword only ({self.reason})" if self.reason else f"semantic {self.semantic.value.replace('_', ' ')}"

    def sentence(self) -> str:
        """The vault named, then its state: what the status bar, Index health and warnings say."""
        if self.phase is Phase.NOT_BUILT:
            return f"{self.vault}: not indexed yet"
        if self.phase is Phase.ELSEWHERE:
            return f"{self.vault}: being indexed by another Cairn process"
        if self.phase is Phase.QUEUED:
            return f"{self.vault}: waiting to be indexed"
        if self.phase is Phase.SCANNING:
            return f"{self.vault}: looking for notes"
        if self.phase is Phase.KEYWORD:
            return f"{self.vault}: reading notes {self.percent}%" + (f", {self.eta}" if self.eta else "")
        if self.phase is Phase.OCR:
            return f"{self.vault}: notes ready · reading images by OCR {self.done}/{self.total}"
        if self.phase is Phase.OCR_PAUSED:
            return f"{self.vault}: notes ready · reading images paused at {self.done}/{self.total}"
        if self.phase is Phase.FAILED:
            return f"{self.vault}: indexing failed" + (f" ({self.reason})" if self.reason else "")
        if self.phase is Phase.EMBEDDING:
            return f"{self.vault}: keyword ready · " + self._embedding_words(f"{self.done}/{self.total} ({self.percent}%)")
        return f"{self.vault}: {self.semantic_text()}"

    def _embedding_words(self, count: str) -> str:
        """The running embedding job: the note pass counts notes; the passage pass says what notes already have."""
        eta = f", {self.eta}" if self.eta else ""
        if self.note_pass:
            return f"summary vectors for notes {count}{eta}"
        if self.cover.every_note:
            return f"{self.cover.notes_words()} · embedding passages {count}{eta}"
        return f"embedding {count}{eta}"


def short_state(p: VaultProgress) -> str:
    """A few words for a tree row: "" when ready, else "embedding 43%", "paused 40%", "failed"..."""
    words = {
        Phase.NOT_BUILT: "not indexed",
        Phase.ELSEWHERE: "indexed elsewhere",
        Phase.QUEUED: "waiting",
        Phase.SCANNING: "looking for notes",
        Phase.KEYWORD: f"reading notes {p.percent}%",
        Phase.EMBEDDING: f"embedding {p.percent}%",
        Phase.OCR: f"OCR {p.done}/{p.total}",
        Phase.PAUSED: f"paused at {p.percent}%",
        Phase.OCR_PAUSED: f"OCR paused {p.done}/{p.total}",
        Phase.FAILED: "failed",
    }
    if p.phase in words:
        return words[p.phase]
    return "keyword only" if p.semantic.degraded else ""


def summarise(progress: list[VaultProgress]) -> str:
    """One short line for several vaults ("3 vaults · 1 embedding 43%"); one vault: its sentence.

    A status bar cannot hold a sentence per vault: three of them were clipped to
    "dendron: 1012 notes +". The line names what is moving or wrong; the rest is "ready".
    """
    if not progress:
        return "No vaults yet"
    if len(progress) == 1:
        return progress[0].sentence()
    parts = [f"{len(progress)} vaults"]
    moving = ((Phase.KEYWORD, "reading notes"), (Phase.EMBEDDING, "embedding"), (Phase.OCR, "reading images"))
    for phase, word in (*moving, (Phase.PAUSED, "paused"), (Phase.OCR_PAUSED, "OCR paused"), (Phase.FAILED, "failed")):
        these = [p for p in progress if p.phase is phase]
        if these:
            pct = f" {these[0].percent}%" if len(these) == 1 and phase in (Phase.KEYWORD, Phase.EMBEDDING) else ""
            parts.append(f"{len(these)} {word}{pct}")
    waiting = sum(1 for p in progress if p.phase in (Phase.QUEUED, Phase.SCANNING, Phase.NOT_BUILT, Phase.ELSEWHERE))
    if waiting:
        parts.append(f"{waiting} waiting")
    if len(parts) == 1:
        ready = all(p.semantic in (SemanticState.OK, SemanticState.OFF, SemanticState.EMPTY) for p in progress)
        parts.append("all ready" if ready else "keyword search ready")
    return " · ".join(parts)
