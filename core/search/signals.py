"""Ranking signals read from a chunk's own text: how much of it is links, which query words it holds.

Both are cheap (one regex pass, one memoised stemming pass) because they run on
every shortlisted candidate of every search. Each becomes a named term in the
hit's score breakdown, so the Why panel can say what moved a note and by how much.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from core.index.analysis import Stemmer

# A Markdown link, a wiki link, an autolink or a bare URL: everything a hub note is made of.
# Images are not navigation (their alt text describes content), so they are skipped.
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(
    r"\[[^\]\n]*\]\([^)\n]*\)"  # [label](target)
    r"|\[\[[^\]\n]*\]\]"  # [[wiki link]]
    r"|<https?://[^>\s]+>"  # <https://autolink>
    r"|https?://\S+"  # bare URL
)
_SPACE = re.compile(r"\s+")
# A chunk that is more than LINK_SHARE_START navigation starts to lose score, down to LINK_FLOOR
# times its score at LINK_SHARE_FULL: a prose note with a few references keeps its score,
# a table of contents or link list (README indexes, MOCs) falls behind the notes it points to.
# A chunk also needs MIN_NAVIGATION_LINES such lines: a short note whose three lines each cite
# a source is not a hub (on the TIL vault, 20 content notes had a share of 0.5-0.78 that way).
LINK_SHARE_START = 0.6
LINK_SHARE_FULL = 0.85
LINK_FLOOR = 0.4
MIN_NAVIGATION_LINES = 8
# ...unless it is nothing but link lines (the short tail chunk of a long index still is one).
PURE_NAVIGATION_SHARE, PURE_NAVIGATION_LINES = 0.95, 4


@dataclass(frozen=True, slots=True)
class LinkShare:
    """How much of a chunk is links, and the factor its score is multiplied by for that."""

    share: float
    factor: float

    @property
    def label(self) -> str:
        return f"mostly links ({self.share:.2f}) → ×{self.factor:.2f}"


def link_share(text: str) -> LinkShare:
    """The share of a chunk that is navigation lines, and the resulting factor.

    A line is navigation when at least half of its characters are links: a list
    item "* [Title](url) - 2024-01-02" is, a sentence citing one source is not.
    Counting whole lines (weighted by their length) rather than link characters
    keeps prose with many inline links at full score.

    Args:
        text: The chunk's Markdown.

    Returns:
        ``share`` in [0, 1] and ``factor`` in [LINK_FLOOR, 1]; 1 means no penalty.
    """
    total = navigation = lines = 0
    for line in _IMAGE.sub(" ", text).splitlines():
        size = len(_SPACE.sub("", line))
        if not size:
            continue
        total += size
        linked = sum(len(_SPACE.sub("", m.group(0))) for m in _LINK.finditer(line))
        if linked * 2 >= size:
            navigation += size
            lines += 1
    if total == 0:
        return LinkShare(0.0, 1.0)
    share = navigation / total
    if lines < MIN_NAVIGATION_LINES and not (share >= PURE_NAVIGATION_SHARE and lines >= PURE_NAVIGATION_LINES):
        return LinkShare(share, 1.0)
    return LinkShare(share, link_factor(share))


def link_factor(share: float) -> float:
    """1 below LINK_SHARE_START, falling linearly to LINK_FLOOR at LINK_SHARE_FULL and beyond."""
    if share <= LINK_SHARE_START:
        return 1.0
    ramp = min(1.0, (share - LINK_SHARE_START) / (LINK_SHARE_FULL - LINK_SHARE_START))
    return 1.0 - (1.0 - LINK_FLOOR) * ramp


def terms_present(text: str, stems: Collection[str], stemmer: Stemmer, *, need_all: bool = False) -> frozenset[str]:
    """Which of the query's stems occur in `text` (scanned as the index scans it).

    A cheap substring test on each stem's first four letters (Porter stemming
    changes endings, not beginnings) rules most chunks out before the stemming
    scan. With `need_all`, a chunk that cannot hold every stem returns early
    with what the pre-test allows, which is enough to say "not all".
    """
    if not stems:
        return frozenset()
    low = text.lower()
    wanted = {stem for stem in stems if stem[:4] in low}
    if not wanted or (need_all and len(wanted) < len(stems)):
        return frozenset(wanted) if need_all else frozenset()
    found: set[str] = set()
    for _, _, term in stemmer.spans(text):
        if term in wanted:
            found.add(term)
            if len(found) == len(wanted):
                break
    return frozenset(found)
