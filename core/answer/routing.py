"""Folder routing (opt-in, needs a language model): search the folders a question is about first.

The model ranks the vault's folders for the question; each chosen folder is
searched on its own and its hits weighed by position (1.0, 0.9, … at least 0.1),
so a note from the most likely folder outranks an equal one from the fifth.
Folders the user chose always come first. When the model fails, or names no
folder that exists, the search runs over all folders as without routing.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from core.base.models import Hit, Term

MAX_FOLDERS_IN_PROMPT = 200
MAX_CHOSEN = 5
MAX_REPLY_SHOWN = 300
PER_FOLDER_K = 15
ROUTE_PROMPT = (
    "You pick the folders of a notes vault that most likely hold the answer to a question. "
    "Include only folders that are directly relevant; leave out folders that are only loosely related. "
    'Reply with a JSON array of folder names from the list, most relevant first, e.g. ["git", "macos"].'
)


class Fallback(StrEnum):
    """Why the model's choice was not used: the Debug tab names the cause so a user can act on it."""

    TIMEOUT = "timeout"  # the model did not answer in time
    FAILED = "failed"  # the model could not be reached or refused (address, key, server error)
    INVALID_REPLY = "invalid_reply"  # it answered, but named no folder of the vault
    NO_FOLDERS = "no_folders"  # the vault has no folders to choose from


@dataclass(frozen=True, slots=True)
class Routing:
    """The folders searched first, and why the model's choice was not used when it was not.

    Attributes:
        folders: In search order: the user's folders first, then the model's ranking.
        weights: Each folder's position weight (1.0, 0.9, … at least 0.1).
        user_count: How many of `folders` the user chose (they lead the list).
        fallback: Why the model's ranking is missing, as a sentence; None when it was used.
        fallback_kind: The same reason as a code, for the UI and tests.
        reply: What the model replied (shortened), so an invalid reply can be seen.
    """

    folders: tuple[str, ...]
    weights: tuple[float, ...]
    fallback: str | None = None
    user_count: int = 0
    fallback_kind: Fallback | None = None
    reply: str = ""

    @property
    def all_folders(self) -> bool:
        """True when the search ran over every folder: nothing was chosen, by the user or the model."""
        return not self.folders

    def as_debug(self) -> dict[str, Any]:
        return {
            "folders": list(self.folders),
            "weights": list(self.weights),
            "chosen_by": ["you" if i < self.user_count else "model" for i in range(len(self.folders))],
            "fallback": self.fallback,
            "fallback_kind": None if self.fallback_kind is None else self.fallback_kind.value,
            "searched_all_folders": self.all_folders,
            "reply": self.reply,
        }


def position_weight(index: int) -> float:
    return round(max(0.1, 1.0 - 0.1 * index), 2)


def folders_of(rel_paths: Iterable[str]) -> list[str]:
    """Every folder that holds a note directly, sorted; notes at the root are not a folder."""
    return sorted({p.rsplit("/", 1)[0] for p in rel_paths if "/" in p})


def parse_folders(text: str, available: Sequence[str]) -> list[str]:
    """The known folders the model named, in its order; case is forgiven, inventions dropped."""
    known = {f.lower().strip("/"): f for f in available}
    names: list[str] = []
    match = re.search(r"\[.*?\]", text, re.DOTALL)
    if match:
        try:
            parsed = json.loads(match.group(0))
            names = [str(x) for x in parsed] if isinstance(parsed, list) else []
        except ValueError:
            names = []
    if not names:  # one name a line; a code fence's language ("```bash") is not a folder the model chose
        names = [line.strip(" -*\"'`,") for line in text.splitlines() if not line.lstrip().startswith("```")]
    out: list[str] = []
    for name in names:
        folder = known.get(name.lower().strip("/ "))
        if folder is not None and folder not in out:
            out.append(folder)
    return out[:MAX_CHOSEN]


def select_folders(
    question: str,
    available: Sequence[str],
    user_folders: Sequence[str],
    provider: Any,
    cancel: threading.Event | None = None,
) -> Routing:
    """User folders first, then the model's ranking of the rest; all folders when the model fails."""
    from core.providers.llm import ChatMessage, LLMError

    chosen = [f.strip("/") for f in user_folders if f.strip("/")]
    users = len(chosen)
    rest = [f for f in available if f not in chosen][:MAX_FOLDERS_IN_PROMPT]
    fallback: str | None = None
    kind: Fallback | None = None
    text = ""
    if rest:
        user = "Folders:\n" + "\n".join(rest) + f"\n\nQuestion: {question}"
        try:
            messages = [ChatMessage("system", ROUTE_PROMPT), ChatMessage("user", user)]
            text = "".join(provider.stream(messages, temperature=0.0, max_tokens=80, cancel=cancel))
            ranked = parse_folders(text, rest)
            if not ranked:
                fallback, kind = "the model's reply named no folder of the vault", Fallback.INVALID_REPLY
            chosen.extend(ranked)
        except LLMError as exc:
            timeout = exc.code == "timeout"
            kind = Fallback.TIMEOUT if timeout else Fallback.FAILED
            fallback = f"the model {'timed out' if timeout else 'failed'}: {exc.message}"
    reply = text.strip()[:MAX_REPLY_SHOWN]
    if not chosen:
        return Routing((), (), fallback or "the vault has no folders to choose from", 0, kind or Fallback.NO_FOLDERS, reply)
    return Routing(tuple(chosen), tuple(position_weight(i) for i in range(len(chosen))), fallback, users, kind, reply)


def weigh(hits: Sequence[Hit], folder: str, weight: float) -> list[Hit]:
    """The hits of one folder's search, their scores times the folder's weight (a named Why term)."""
    out = []
    for hit in hits:
        delta = hit.score * weight - hit.score
        term = Term(f"folder route: {folder} ×{weight:.1f}", delta)
        out.append(replace(hit, score=hit.score + delta, contributions=hit.contributions + (term,)))
    return out


def merge(groups: Sequence[Sequence[Hit]], limit: int) -> list[Hit]:
    """One list from the folders' lists: each chunk once (its best score), best first."""
    best: dict[str, Hit] = {}
    for group in groups:
        for hit in group:
            key = hit.chunk.chunk_id
            if key not in best or hit.score > best[key].score:
                best[key] = hit
    return sorted(best.values(), key=lambda h: -h.score)[:limit]
