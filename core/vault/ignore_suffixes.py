"""Ignore rules that are only `*.suffix` patterns, matched as pathspec matches them, without pathspec.

Nearly every vault's rules are just the kinds switched off (`core.vault.kinds.kind_patterns`:
`*.png`, `*.jpg` ... for images, off by default); importing pathspec for them cost ~25-35 ms
of every cold `cairn index` (more than a tenth of Recoll's whole run on a small vault).
pathspec (1.1, `GitIgnoreSpec`) turns `*.png` into `^(?:.+/)?[^/]*\\.png(?:(?P<ps_d>/)|$)` and
ignores a path that any such include pattern matches; the one pattern here is those patterns'
alternation, which matches exactly when one of them does. Blank lines and comments say
nothing; any other line (a negation, a slash, a class, escapes, spaces) leaves the rules to pathspec. The tests compare
the two on generated paths, newlines and dots included (`tests/core/vault/test_scanner.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

_SIMPLE = re.compile(r"\*[A-Za-z0-9_.\-]+")  # `*` then a literal suffix with no glob or separator in it
# pathspec's normalize_file: the platform's other separators become "/", one leading "/" or "./" goes.
_SEPARATORS = tuple(sep for sep in (os.sep, os.altsep) if sep and sep != "/")


def suffix_matcher(lines: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern for ignore `lines` that are all `*.suffix` patterns; None when any is not."""
    rules = [line for line in lines if line and not line.startswith("#")]  # blank lines and comments say nothing
    if not all(_SIMPLE.fullmatch(line) for line in rules):
        return None
    if not rules:
        return re.compile(r"(?!)")  # no rule: nothing is ignored
    suffixes = "|".join(re.escape(line[1:]) for line in dict.fromkeys(rules))
    return re.compile(rf"^(?:.+/)?[^/]*(?:{suffixes})(?:/|$)")


def normalize(path: str) -> str:
    """The path as pathspec's `normalize_file` gives it to its patterns."""
    for sep in _SEPARATORS:
        path = path.replace(sep, "/")
    if path.startswith("/"):
        return path[1:]
    if path.startswith("./"):
        return path[2:]
    return path
