"""Which segments a commit merges: by size tiers, so that a live edit never pays for a big merge.

Whoosh's `MERGE_SMALL` sorts the segments by size and, once there are more than a few,
merges the smallest ones up to a Fibonacci threshold; as a big vault collects segments of
similar size that point moves up until one commit merges nearly all of them (~20 segments,
~20 s of CPU at ~22k notes), and whichever live edit commits then waits for it.

Here segments are grouped in size tiers of factor `FACTOR` by their live chunks (1-7, 8-63,
64-511 ...). A tier holding `FACTOR` segments is merged into one, which then counts in a
higher tier: every chunk is rewritten about log_8(N) times, and a vault keeps a few
segments per tier. Every commit merges at most `LIVE_MERGE_DOCS` chunks (tiers from the
smallest up), so a live edit's merge stays small (about a second of CPU at most). A bulk
commit is held to the same cap: a first index's batch segments (~1,000 notes each) are
never merged while the index is built. Merging 8 of them mid-build cost more than writing
them (10k Obsidian-shaped notes: 46.5 CPU-s in process with the merge, 29.8 without),
and 10 segments instead of 2 cost a search ~1 ms. What a sync leaves is bounded instead:
at its end, if more than `MAX_SEGMENTS` segments are live, the smallest are merged into
one (`settle`). A segment whose chunks were all deleted is dropped without being read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.index.whoosh_pin import SegmentReader

FACTOR = 8  # segments of one tier that make a merge; also the ratio between tiers' sizes
LIVE_MERGE_DOCS = 4_000  # chunks a commit may merge (~1 s of CPU on a 2-core laptop)
MAX_SEGMENTS = 24  # segments a sync may leave; past it the smallest are merged at its end


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


def settle_plan(sizes: Sequence[SegmentSize], max_segments: int) -> tuple[list[int], list[int]]:
    """The segments (by index) a sync's end merges into one, and those to drop (nothing live).

    Beyond `max_segments` live segments, the smallest (by what reading them costs) are merged
    into one, as few as bring the count to `max_segments`: the big ones a first index wrote
    are left as they are until a vault has many.
    """
    dropped = [i for i, s in enumerate(sizes) if s.live == 0]
    live = sorted((i for i, s in enumerate(sizes) if s.live), key=lambda i: (sizes[i].all, i))
    excess = len(live) - max_segments
    if excess <= 0:
        return [], dropped
    return sorted(live[: excess + 1]), dropped


def tiered(max_docs: int | None) -> Callable[[Any, Sequence[Any]], list[Any]]:
    """A Whoosh merge policy (`writer.commit(mergetype=...)`) merging by `plan`."""
    return _policy(lambda sizes: plan(sizes, max_docs))


def settling(max_segments: int) -> Callable[[Any, Sequence[Any]], list[Any]]:
    """A Whoosh merge policy merging by `settle_plan`."""
    return _policy(lambda sizes: settle_plan(sizes, max_segments))


def _policy(planner: Callable[[list[SegmentSize]], tuple[list[int], list[int]]]) -> Callable[[Any, Sequence[Any]], list[Any]]:
    def policy(writer: Any, segments: Sequence[Any]) -> list[Any]:
        merged, dropped = planner([SegmentSize(s.doc_count_all(), s.doc_count()) for s in segments])
        for i in merged:
            reader = SegmentReader(writer.storage, writer.schema, segments[i])
            writer.add_reader(reader)
            reader.close()
        gone = set(merged) | set(dropped)
        return [s for i, s in enumerate(segments) if i not in gone]

    return policy
