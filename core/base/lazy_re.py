"""A regular expression compiled when it is first used, not when its module is imported.

Every `cairn search` is a new process, and a pattern compiled at import is paid on every
call whether the search needs it or not. Character classes over the CJK blocks are the
dear ones: Python's compiler fills a 65,536-entry table one code point at a time, ~1.5-3 ms
a pattern on a 2-core VM, for text a search of an English vault never holds. A module
keeps such a pattern here and compiles it the first time text needs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator


class LazyPattern:
    """`re.compile(pattern, flags)` on first use; the methods are `re.Pattern`'s."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if this is its first use)."""
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._pattern

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def findall(self, text: str) -> list[str]:
        return self.compiled.findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled.sub(repl, text)
