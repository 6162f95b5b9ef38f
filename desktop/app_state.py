"""The controller's small state types: where the app is in its life, and what searches are limited to.

Apart from the controller so views and tests name them without the controller's
machinery, and so the controller reads as wiring.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

from core.base.config import EngineConfig

if TYPE_CHECKING:
    from desktop.settings import Settings


class Lifecycle(Enum):
    """Where the controller is between start and exit; one state instead of four flags."""

    RUNNING = "running"
    CLOSING = "closing"  # begin_close(): indexing cancelled, the watcher stopping and flushing
    CLOSED = "closed"  # flushed; shutdown() still joins the threads
    SHUT = "shut"  # every thread stopped, the engine closed


@dataclass(frozen=True, slots=True)
class Scope:
    """The vault (and folder inside it) the tree selection limits searches to."""

    vault: str
    folder: str = ""
    base: str = ""  # an Obsidian Base (`.base` path in the vault): searches only its rows
    prefix: str = ""  # a dotted-name node ("a.b."): notes whose path starts with it

    def label(self) -> str:
        if self.base:
            return f"{self.vault}/{self.base}"
        if self.prefix:
            return f"{self.vault}/{self.prefix}*"
        return f"{self.vault}/{self.folder}" if self.folder else self.vault


def vaults_changed_message(before: set[str], after: set[str]) -> str:
    """What the window says when another process registered or removed vaults."""
    added, gone = sorted(after - before), sorted(before - after)
    parts = ([f"added {', '.join(added)}"] if added else []) + ([f"removed {', '.join(gone)}"] if gone else [])
    return f"Vaults changed outside this window: {'; '.join(parts)}"


def follow_app_model(config: EngineConfig, old: Settings, new: Settings) -> EngineConfig:
    """The vaults that followed the app's old model take the new one; a vault given its own keeps it.

    A vault has its own when `cairn index --vault V --embedder ID` or its row in Settings chose one
    (the multilingual model for a Chinese vault, say): it no longer equals the old triple.
    """
    follows = (old.embedder, old.embed_model or None, old.embed_base_url or None)
    provider, model, base_url = new.embedder, new.embed_model or None, new.embed_base_url or None
    vaults = tuple(
        replace(v, embedder=provider, embed_model=model, embed_base_url=base_url) if (v.embedder, v.embed_model, v.embed_base_url) == follows else v
        for v in config.vaults
    )
    return replace(config, vaults=vaults)
