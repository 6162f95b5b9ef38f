"""The tokens display text walks: markdown-it's, or the few `core.vault.display_plain` makes without it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class ReadToken(Protocol):
    """What display text reads of a token: markdown-it's `Token` and `PlainToken` both are one."""

    @property
    def type(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def children(self) -> Sequence[ReadToken] | None: ...

    @property
    def meta(self) -> dict[Any, Any]: ...

    def attrGet(self, name: str) -> Any: ...  # noqa: N802 (markdown-it's name)


class Decline(Exception):
    """The chunk is not in the shapes `display_plain` reads: markdown-it parses it."""


@dataclass(slots=True)
class PlainToken:
    """The part of markdown-it's `Token` the display walker reads."""

    type: str
    content: str = ""
    children: list[PlainToken] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    start: int | None = None  # an ordered list's first number, when it is not 1

    def attrGet(self, name: str) -> int | None:  # noqa: N802 (markdown-it's name)
        return self.start if name == "start" else None
