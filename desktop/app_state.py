"""The controller's small state types: where the app is in its life, and what searches are limited to.

Apart from the controller so views and tests name them without the controller's
machinery, and so the controller reads as wiring.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


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
    prefix: str = ""  # a dotted-name node ("a.b."): notes whose path starts with it

    def label(self) -> str:
        if self.prefix:
            return f"{self.vault}/{self.prefix}*"
        return f"{self.vault}/{self.folder}" if self.folder else self.vault


def vaults_changed_message(before: set[str], after: set[str]) -> str:
    """What the window says when another process registered or removed vaults."""
    added, gone = sorted(after - before), sorted(before - after)
    parts = ([f"added {', '.join(added)}"] if added else []) + ([f"removed {', '.join(gone)}"] if gone else [])
    return f"Vaults changed outside this window: {'; '.join(parts)}"
