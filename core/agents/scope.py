"""What one agent may see and do: areas (a vault, or a folder of one), tools, confidentiality, a rate.

A scope is checked *before* the engine is asked (the search's filters are
narrowed to the scope's areas) and again on everything that comes back (a note
outside the areas, or above the agent's confidentiality, is dropped). A note
that fails the check is "not found" to the agent, in the same words as a note
that does not exist, so a reference cannot probe for existence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Tool(StrEnum):
    """The permission names an agent's scope lists; each guards one or more MCP tools."""

    SEARCH = "search"
    FETCH = "fetch"
    ASK = "ask"
    LINKS = "links"
    RELATED = "related"
    VAULTS = "vaults"
    CHECKUP = "checkup"


#: MCP tool name -> the permission it needs. Resources (`cairn://vault/path`) need `fetch`.
TOOL_PERMISSION: dict[str, Tool] = {
    "search_notes": Tool.SEARCH,
    "fetch_note_chunk": Tool.FETCH,
    "ask_notes": Tool.ASK,
    "note_links": Tool.LINKS,
    "related_notes": Tool.RELATED,
    "list_vaults": Tool.VAULTS,
    "read_resource": Tool.FETCH,
    "list_properties": Tool.SEARCH,  # what search filters on: counted over the notes in scope only
    "list_tasks": Tool.SEARCH,
    "base_rows": Tool.SEARCH,  # a Base is a saved search
    "vault_checkup": Tool.CHECKUP,  # reads the whole scope at once (links, vectors): granted on its own
}

#: Levels an agent may be shown. `restricted` is never among them, and an unknown level fails closed.
PUBLIC_ONLY = frozenset({"public"})
WITH_INTERNAL = frozenset({"public", "internal"})


@dataclass(frozen=True, slots=True)
class Area:
    """A whole vault (`folder == ""`) or one folder of it, with everything below."""

    vault: str
    folder: str = ""

    def covers(self, vault: str, rel_path: str) -> bool:
        if vault != self.vault:
            return False
        return not self.folder or rel_path.startswith(self.folder + "/")

    def label(self) -> str:
        return f"{self.vault}/{self.folder}" if self.folder else self.vault


@dataclass(frozen=True, slots=True)
class Scope:
    """An agent's rights. No areas means every vault; `rate` is calls per minute (0 = no limit)."""

    areas: tuple[Area, ...] = ()
    tools: frozenset[Tool] = field(default_factory=lambda: frozenset(Tool))
    internal: bool = False
    rate: int = 60

    def may_call(self, tool_name: str) -> bool:
        perm = TOOL_PERMISSION.get(tool_name)
        return perm is not None and perm in self.tools

    def sees_vault(self, vault: str) -> bool:
        return not self.areas or any(a.vault == vault for a in self.areas)

    def sees(self, vault: str, rel_path: str, confidentiality: str) -> bool:
        """The one check every note passes before an agent learns anything about it."""
        levels = WITH_INTERNAL if self.internal else PUBLIC_ONLY
        if confidentiality not in levels:
            return False
        return not self.areas or any(a.covers(vault, rel_path) for a in self.areas)

    def vaults_in(self, known: list[str]) -> list[str]:
        return [v for v in known if self.sees_vault(v)]

    def folders_for(self, vault: str) -> tuple[str, ...] | None:
        """The folder filter for a search of `vault`: () for the whole vault, None if not in scope."""
        if not self.areas:
            return ()
        mine = [a for a in self.areas if a.vault == vault]
        if not mine:
            return None
        if any(not a.folder for a in mine):
            return ()
        return tuple(sorted({a.folder for a in mine}))

    def to_json(self) -> dict[str, Any]:
        return {
            "areas": [{"vault": a.vault, "folder": a.folder} for a in self.areas],
            "tools": sorted(t.value for t in self.tools),
            "internal": self.internal,
            "rate": self.rate,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scope:
        """Read a stored scope; anything unreadable narrows it (unknown tools are dropped)."""
        areas = tuple(Area(str(a["vault"]), str(a.get("folder", "")).strip("/")) for a in data.get("areas", ()))
        tools = frozenset(Tool(t) for t in data.get("tools", ()) if t in Tool.__members__.values())
        return cls(areas=areas, tools=tools, internal=bool(data.get("internal", False)), rate=max(0, int(data.get("rate", 60))))

    def describe(self) -> str:
        where = ", ".join(a.label() for a in self.areas) or "all vaults"
        tools = ", ".join(sorted(t.value for t in self.tools)) or "no tools"
        level = "public + internal" if self.internal else "public only"
        rate = f"{self.rate}/min" if self.rate else "no rate limit"
        return f"{where}; {tools}; {level}; {rate}"


def parse_tools(spec: str | None) -> frozenset[Tool]:
    """`search,fetch` -> the permissions; None or 'all' -> every tool. Unknown names raise ValueError."""
    if spec is None or spec.strip().lower() == "all":
        return frozenset(Tool)
    names = [s.strip().lower() for s in spec.replace(" ", ",").split(",") if s.strip()]
    known = {t.value for t in Tool}
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"unknown tool(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
    return frozenset(Tool(n) for n in names)


def parse_folder(spec: str, vault_names: list[str]) -> Area:
    """`VAULT/FOLDER` -> an Area, the vault found as the longest known name (vault names may hold '/')."""
    text = spec.strip().strip("/")
    for name in sorted(vault_names, key=len, reverse=True):
        if text.startswith(name + "/") and len(text) > len(name) + 1:
            return Area(name, text[len(name) + 1 :].strip("/"))
    raise ValueError(f"{spec!r} is not VAULT/FOLDER of a known vault (known: {', '.join(sorted(vault_names)) or 'none'})")
