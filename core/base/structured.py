"""Obsidian's structured layer as data: typed properties, property filters and tasks.

Frozen dataclasses shared by the vault reader (which makes them), the index (which files
and filters them) and the front ends (which show them). The logic lives in
`core.vault.properties`, `core.vault.tasks` and `core.index.property_terms`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class PropertyType(StrEnum):
    """A property's type, named as Obsidian names them in `.obsidian/types.json`."""

    TEXT = "text"
    LIST = "multitext"  # Obsidian's name for a list of texts
    NUMBER = "number"
    CHECKBOX = "checkbox"
    DATE = "date"
    DATETIME = "datetime"

    @classmethod
    def parse(cls, name: str) -> PropertyType | None:
        """A type by Obsidian's name (also "list", "tags", "aliases"), or None if unknown."""
        name = str(name).strip().lower()
        if name in {"list", "tags", "aliases"}:
            return cls.LIST
        try:
            return cls(name)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Property:
    """One front-matter property of a note, its values typed.

    `values` are strings in a canonical form: text as written, numbers as Python prints
    them, dates `YYYY-MM-DD`, date-times `YYYY-MM-DDTHH:MM:SS`, checkboxes `true`/`false`.
    A text or list property has one value per item.
    """

    key: str  # lower-cased: Obsidian treats property names case-insensitively
    type: PropertyType
    values: tuple[str, ...]


class Op(StrEnum):
    """A property filter's comparison."""

    EQ = "="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    HAS = "has"


@dataclass(frozen=True, slots=True)
class PropertyFilter:
    """`status:draft`, `rating>=4`, `has:project`, `-status:done` as one typed condition."""

    key: str
    op: Op
    value: str = ""
    negate: bool = False

    def spelled(self) -> str:
        """The filter as the query box spells it (for chips, warnings and JSON)."""
        sign = "-" if self.negate else ""
        if self.op is Op.HAS:
            return f"{sign}has:{self.key}"
        value = f'"{self.value}"' if " " in self.value else self.value
        if self.op is Op.EQ:
            return f"{sign}{self.key}:{value}"
        return f"{sign}{self.key}{self.op.value}{value}"


class TaskStatus(StrEnum):
    """A task's state, from its checkbox character (the Tasks plugin's core statuses)."""

    OPEN = "open"  # "[ ]"
    DONE = "done"  # "[x]" / "[X]"
    IN_PROGRESS = "in_progress"  # "[/]"
    CANCELLED = "cancelled"  # "[-]"
    OTHER = "other"  # any other character: a custom status, counted as open

    @property
    def is_open(self) -> bool:
        return self in (TaskStatus.OPEN, TaskStatus.IN_PROGRESS, TaskStatus.OTHER)


@dataclass(frozen=True, slots=True)
class Task:
    """One `- [ ]` line of a note: what it says, where it is, its dates and priority."""

    line: int  # 1-based line of the raw file
    symbol: str  # the checkbox character as written
    status: TaskStatus
    text: str  # the task's description, dates and priority signs taken out
    heading: str = ""  # the heading path above it ("A > B"), "" at the top
    due: str | None = None
    scheduled: str | None = None
    start: str | None = None
    created: str | None = None
    done: str | None = None
    cancelled: str | None = None
    priority: str = "normal"  # highest | high | medium | normal | low | lowest
