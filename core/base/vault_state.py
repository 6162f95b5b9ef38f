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
    KEYWORD = "keyword"  # reading notes into the keyword index
    EMBEDDING = "embedding"  # computing vectors; keyword search already works
    READY = "ready"


class LiveState(StrEnum):
    """Whether edits on disk reach the index on their own."""

    OFF = "off"
    WAITING = "waiting"  # watched; changes queue until the keyword index exists
    LIVE = "live"
    FAILED = "failed"  # the watcher reported an error (see the reason); it restarts itself


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

    @property
    def percent(self) -> int:
        if self.total <= 0:
            return 100 if self.phase is Phase.READY else 0
        return min(100, int(self.done * 100 / self.total))

    def semantic_text(self) -> str:
        """'semantic ready', 'semantic 60%', 'keyword only (semantic search is turned off)'."""
        if self.semantic is SemanticState.OK:
            return "semantic ready"
        if self.semantic is SemanticState.PARTIAL or self.phase is Phase.EMBEDDING:
            return f"semantic {self.percent}%"
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
        if self.phase is Phase.KEYWORD:
            return f"{self.vault}: reading notes {self.percent}%"
        return f"{self.vault}: {self.semantic_text()}"
