"""Which segments a commit merges: by size tiers, so that a live edit never pays for a big merge.

Whoosh's `MERGE_SMALL` sorts the segments by size and, once there are more than a few,
merges the smallest ones up to a Fibonacci threshold; as a big vault collects segments of
similar size that point moves up until one commit merges nearly all of them (~20 segments,
~20 s of CPU at ~22k notes), and whichever live edit commits then waits for it.

Here segments are grouped in size tiers of factor `FACTOR` by their live chunks (1-7, 8-63,
64-511 ...). A tier holding `FACTOR` segments is merged into one, which then counts in a
higher tier: every chunk is rewritten about log_8(N) times, and a vault keeps a few
segments per tier. A commit merges at most `max_docs` chunks (tiers from the smallest up):
a live edit's commit passes `LIVE_MERGE_DOCS`, so its merge stays small (about a second
of CPU at most); bulk commits (a sync's batches, a built segment) pass None and take the
big tiers. A segment whose chunks were all deleted is dropped without being read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.index.whoosh_pin import SegmentReader

FACTOR = 8  # segments of one tier that make a merge; also the ratio between tiers' sizes
LIVE_MERGE_DOCS = 4_000  # chunks a live edit's commit may merge (~1 s of CPU on a 2-core laptop)


@dataclass(frozen=True, slots=True)
class SegmentSize:
    """What the policy weighs: a segment's chunks, all and live (not deleted)."""

    all: int
    live: int


def tier(docs: int) -> int:
    """A segment's size tier: 0 for 0-7 chunks, 1 for 8-63, 2 for 64-511 ..."""
    level = 0
    while docs >= FACTOR:
        docs //= FACTOR
        level += 1
    return level


def plan(sizes: Sequence[SegmentSize], max_docs: int | None) -> tuple[list[int], list[int]]:
    """The segments (by index) to merge and those to drop (nothing live), for one commit.

    Tiers are taken from the smallest up while each full one fits in `max_docs` chunks
    (read cost: a segment's postings are read whole, deleted chunks included).
    """
    dropped = [i for i, s in enumerate(sizes) if s.live == 0]
    tiers: dict[int, list[int]] = {}
    for i, s in enumerate(sizes):
        if s.live:
            tiers.setdefault(tier(s.live), []).append(i)
    merged: list[int] = []
    cost = 0
    for level in sorted(tiers):
        members = tiers[level]
        if len(members) < FACTOR:
            continue
        more = sum(sizes[i].all for i in members)
        if max_docs is not None and cost + more > max_docs:
            break
        merged += members
        cost += more
    return sorted(merged), dropped


def tiered(max_docs: int | None) -> Callable[[Any, Sequence[Any]], list[Any]]:
    """A Whoosh merge policy (`writer.commit(mergetype=...)`) merging by `plan`."""

    def policy(writer: Any, segments: Sequence[Any]) -> list[Any]:
        merged, dropped = plan([SegmentSize(s.doc_count_all(), s.doc_count()) for s in segments], max_docs)
        for i in merged:
            reader = SegmentReader(writer.storage, writer.schema, segments[i])
            writer.add_reader(reader)
            reader.close()
        gone = set(merged) | set(dropped)
        return [s for i, s in enumerate(segments) if i not in gone]

    return policy
