"""Whether text holds a character of some code-point ranges, without compiling a class over them.

Python's regex compiler fills its 65,536-entry table one code point at a time: a class over
the CJK blocks costs ~3.5 ms to compile (`core.base.lazy_re` compiles such classes late, but
any vault with a curly quote or an emoji then pays them on its first chunk: ~8 ms of a cold
index of obsidian-tasks-demo for two of them). Here one small class finds the characters that
could be in the ranges: everything at or above the lowest range start, except the General
Punctuation to Miscellaneous Symbols and Arrows blocks and the emoji planes, which none of
the callers' ranges touch (checked at construction). Each such character is then looked up in
the ranges themselves; in Latin-script text there are few or none.
"""

from __future__ import annotations

from bisect import bisect_right

from core.base.lazy_re import LazyPattern

# Blocks no caller's ranges reach, and which Western notes are full of (’ “ — … → ✅ ⏫ 📅 🔁):
# left out of the candidate class so that such text needs no look-up at all.
_COMMON_HIGH = ((0x2000, 0x2BFF), (0x1F000, 0x1FAFF))


class CharRanges:
    """A set of code-point ranges, written as the inside of a regex character class (`a-z\\u3005`)."""

    def __init__(self, spec: str) -> None:
        self.ranges = _parse(spec)
        self._starts = [start for start, _ in self.ranges]
        self._ends = [end for _, end in self.ranges]
        low = self.ranges[0][0]
        for start, end in _COMMON_HIGH:
            if any(s <= end and start <= e for s, e in self.ranges):
                raise ValueError(f"ranges reach U+{start:04X}-U+{end:04X}, which the candidate class leaves out")
        skipped = "".join(f"{_esc(start)}-{_esc(end)}" for start, end in _COMMON_HIGH)
        # A negated class: the compiler walks only the left-out code points (~7,000), not the ranges.
        self._candidate = LazyPattern(f"[^\\x00-{_esc(low - 1)}{skipped}]") if low > 0 else LazyPattern(r"[\s\S]")

    def holds(self, ch: str) -> bool:
        """Whether the character `ch` is in one of the ranges."""
        code = ord(ch)
        i = bisect_right(self._starts, code) - 1
        return i >= 0 and code <= self._ends[i]

    def found(self, text: str, pos: int = 0) -> bool:
        """Whether `text` (from `pos`) holds a character in one of the ranges."""
        search = self._candidate.compiled.search
        while (m := search(text, pos)) is not None:
            if self.holds(m.group()):
                return True
            pos = m.end()
        return False


def _parse(spec: str) -> list[tuple[int, int]]:
    """The (first, last) code points of a class body of single characters and `a-b` ranges, merged and sorted."""
    ranges: list[tuple[int, int]] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            ranges.append((ord(spec[i]), ord(spec[i + 2])))
            i += 3
        else:
            ranges.append((ord(spec[i]), ord(spec[i])))
            i += 1
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _esc(code: int) -> str:
    return f"\\U{code:08x}"

