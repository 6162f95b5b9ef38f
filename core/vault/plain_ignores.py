"""Ignore rules that are plain names and suffixes, matched without pathspec.

Most vaults have no `.gitignore` or `.cairnignore`: their rules are the patterns of the kinds
switched off (`*.png`, `*.jpg`, `conversations.json`: `core.vault.kinds.kind_patterns`). A
gitignore pattern with no slash and no wildcard other than a leading `*` matches a path when
one of its parts (a folder's or the file's name) ends with the text after the `*`, or is that
text without one; a matching folder ignores all it holds. That is a suffix test per part,
where pathspec (~15 ms of imports) compiles one regex per line and matches each path against
every one. Any other line (a slash, `!`, `?`, `[`, `**`, a backslash, a space) goes to
pathspec, which `core.vault.scanner.IgnoreRules` imports then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# A name ("conversations.json") or "*" and a suffix ("*.png"): no other wildcard, separator,
# negation, comment, escape or space, so gitignore's rules read it as the literal text it is.
_PLAIN = re.compile(r"(\*?)([^*?\[\]\\/!#\s]+)")


@dataclass(frozen=True, slots=True)
class PlainIgnores:
    """Rules that are all plain: the suffixes (`*.png` -> ".png") and exact names they ignore."""

    suffixes: tuple[str, ...]
    names: frozenset[str]

    @classmethod
    def of(cls, lines: Sequence[str]) -> PlainIgnores | None:
        """The rules as plain ones; None when a line needs gitignore's full matching."""
        suffixes: list[str] = []
        names: set[str] = set()
        for line in lines:
            if not line or line.startswith("#"):
                continue  # gitignore's blank lines and comments match nothing
            plain = _PLAIN.fullmatch(line)
            if plain is None:
                return None
            if plain.group(1):
                suffixes.append(plain.group(2))
            else:
                names.add(plain.group(2))
        return cls(tuple(suffixes), frozenset(names))

    def ignores(self, parts: Sequence[str]) -> bool:
        """Whether a path split at its slashes matches a rule (pathspec's answer for these lines)."""
        return any(part in self.names or part.endswith(self.suffixes) for part in parts)
