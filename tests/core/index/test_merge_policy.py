"""Which segments a commit merges: size tiers, and never a big merge on a live edit."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.index.merge_policy as mp
from core.base.models import Document
from core.index.keyword_index import BULK_NOTES, KeywordIndex
from core.index.merge_policy import FACTOR, SegmentSize, plan, tier
from core.vault.chunker import ChunkLimits
from core.vault.notes import parse_note


def sizes(*counts: int) -> list[SegmentSize]:
    return [SegmentSize(n, n) for n in counts]


def test_tiers_grow_by_the_factor() -> None:
    assert [tier(n) for n in (0, 1, 7, 8, 63, 64, 511, 512, 4095, 4096)] == [0, 0, 0, 1, 1, 2, 2, 3, 3, 4]


def test_a_tier_is_merged_once_it_holds_factor_segments() -> None:
    assert plan(sizes(*[3] * (FACTOR - 1)), None) == ([], [])
    assert plan(sizes(*[3] * FACTOR), None) == (list(range(FACTOR)), [])
    # a full tier of medium segments beside three small ones: only the full tier
    assert plan(sizes(2, 5, 1, *[40] * FACTOR), None) == (list(range(3, 3 + FACTOR)), [])


def test_a_live_commit_leaves_the_big_tiers_to_bulk_commits() -> None:
    """~20 segments of ~1,100 chunks (a ~22k-note vault): Whoosh's MERGE_SMALL merged 19 on one edit."""
    big = [1_100] * 19
    merged, _ = plan(sizes(*big, *[2] * FACTOR), mp.LIVE_MERGE_DOCS)
    assert merged == list(range(19, 19 + FACTOR))  # the small tier only
    merged, _ = plan(sizes(*big, *[2] * FACTOR), None)
    assert merged == list(range(19 + FACTOR))  # a bulk commit takes both


def test_deleted_chunks_count_against_a_segment_and_an_empty_one_is_dropped_unread() -> None:
    shrunk = [SegmentSize(500, 6)] + [SegmentSize(5, 5)] * (FACTOR - 1)  # most of its chunks deleted: tier 0
    assert plan(shrunk, None) == (list(range(FACTOR)), [])
    assert plan(shrunk, 100) == ([], [])  # but reading it costs its 500 chunks
    assert plan([SegmentSize(900, 0), SegmentSize(10, 10)], 1) == ([], [0])


def _note(i: int) -> Document:
    text = f"# Note {i}\n\nA short note about zanzibar number {i}.\n"
    return parse_note("v", f"n{i:04d}.md", text.encode(), size=len(text), mtime_ns=0, limits=ChunkLimits())


def _segments(index: KeywordIndex) -> list[str]:
    return sorted(s.segment_id() for s in index._ix._segments())


@pytest.fixture()
def index(tmp_path: Path) -> KeywordIndex:
    """20 segments of 30 one-chunk notes, written without merging (as many syncs would leave them)."""
    ki = KeywordIndex(tmp_path / "ix")
    for start in range(0, 600, 30):
        with ki._store.writing() as writer:
            ki._store.add(writer, [_note(i) for i in range(start, start + 30)])
        writer.commit(merge=False)
    assert len(_segments(ki)) == 20
    return ki


def test_a_live_edit_merges_no_more_than_its_budget(index: KeywordIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mp, "LIVE_MERGE_DOCS", 100)  # below the 20 x 30 chunks of the full tier
    monkeypatch.setattr("core.index.keyword_index.LIVE_MERGE_DOCS", 100)
    before = _segments(index)
    index.apply(["n0003.md"], [_note(3)])  # one note edited: MERGE_SMALL merged 10 of the 20 here
    after = _segments(index)
    assert set(before) <= set(after) and len(after) == 21  # nothing merged, one new segment
    assert index.doc_count() == 600


def test_a_bulk_commit_merges_the_full_tier(index: KeywordIndex) -> None:
    index.apply([], [_note(i) for i in range(1000, 1000 + BULK_NOTES)])
    assert len(_segments(index)) == 1  # the 20 segments and the batch, in one
    assert index.doc_count() == 600 + BULK_NOTES


def test_live_edits_keep_the_segment_count_bounded(index: KeywordIndex) -> None:
    counts = []
    for i in range(3 * FACTOR):
        index.apply([f"n{i:04d}.md"], [_note(i)])
        counts.append(len(_segments(index)))
    assert max(counts) <= 20 + FACTOR  # tiny segments are merged as they make a full tier
    assert index.doc_count() == 600
