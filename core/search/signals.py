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
# A chunk that is more than LINK_SHARE_START links starts to lose score, down to LINK_FLOOR
# times its score at LINK_SHARE_FULL: a prose note with a few references keeps its score,
# a table of contents or link list (README indexes, MOCs) falls behind the notes it points to.
LINK_SHARE_START = 0.5
LINK_SHARE_FULL = 0.8
LINK_FLOOR = 0.4


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
    total = navigation = 0
    for line in _IMAGE.sub(" ", text).splitlines():
        size = len(_SPACE.sub("", line))
        if not size:
            continue
        total += size
        linked = sum(len(_SPACE.sub("", m.group(0))) for m in _LINK.finditer(line))
        if linked * 2 >= size:
            navigation += size
    if total == 0:
        return LinkShare(0.0, 1.0)
    share = navigation / total
    return LinkShare(share, link_factor(share))


def link_factor(share: float) -> float:
    """1 below LINK_SHARE_START, falling linearly to LINK_FLOOR at LINK_SHARE_FULL and beyond."""
    if share <= LINK_SHARE_START:
        return 1.0
    ramp = min(1.0, (share - LINK_SHARE_START) / (LINK_SHARE_FULL - LINK_SHARE_START))
    return 1.0 - (1.0 - LINK_FLOOR) * ramp


def terms_present(text: str, stems: Collection[str], stemmer: Stemmer) -> frozenset[str]:
    """Which of the query's stems occur in `text` (scanned as the index scans it)."""
    if not stems:
        return frozenset()
    wanted = set(stems)
    found: set[str] = set()
    for _, _, term in stemmer.spans(text):
        if term in wanted:
            found.add(term)
            if len(found) == len(wanted):
                break
    return frozenset(found)
