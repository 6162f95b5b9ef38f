"""`CharRanges` answers as a compiled character class over the same ranges would."""

from __future__ import annotations

import random
import re

import pytest

from core.base.char_ranges import CharRanges
from core.index.analysis import CJK_CHARS
from core.vault.language import COUNTED_CHARS


@pytest.mark.parametrize("spec", [CJK_CHARS, COUNTED_CHARS, "a-cx\u00e9", "\u3005\u3007\u3006"])
def test_found_and_holds_agree_with_the_compiled_class(spec: str) -> None:
    ranges = CharRanges(spec)
    compiled = re.compile(f"[{spec}]")
    edges = {c for start, end in ranges.ranges for c in (start - 1, start, end, end + 1) if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF}
    pool = [chr(c) for c in sorted(edges)] + list("ab ’—…✅⏫📅é\n") + ["\U0001faff", "\U0001fb00", "\u1fff", "\u2c00"]
    for ch in pool:
        assert ranges.holds(ch) == (compiled.match(ch) is not None), hex(ord(ch))
    rng = random.Random(27)
    for _ in range(5000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 12)))
        assert ranges.found(text) == (compiled.search(text) is not None), ascii(text)


def test_ranges_are_merged_and_sorted() -> None:
    assert CharRanges("x-za-cb-db").ranges == [(ord("a"), ord("d")), (ord("x"), ord("z"))]


def test_ranges_in_the_left_out_blocks_are_refused() -> None:
    with pytest.raises(ValueError):
        CharRanges("\u2010-\u2015")
