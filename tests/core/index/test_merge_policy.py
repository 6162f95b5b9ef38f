"""Which segments a commit merges: size tiers, never a big merge on a commit, the count bounded at a sync's end."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.index.merge_policy as mp
from core.base.config import EngineConfig, VaultConfig
from core.base.models import Document
from core.base.paths import AppPaths
from core.index.indexer import VaultIndex
from core.index.keyword_index import BULK_NOTES, KeywordIndex
from core.index.merge_policy import FACTOR, SegmentSize, plan, settle_plan, tier
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


def test_a_bulk_commit_merges_the_full_tier_within_the_cap(index: KeywordIndex) -> None:
    index.apply([], [_note(i) for i in range(1000, 1000 + BULK_NOTES)])
    assert len(_segments(index)) == 1  # the 20 segments (600 chunks) and the batch, in one
    assert index.doc_count() == 600 + BULK_NOTES


def test_a_bulk_commit_leaves_a_tier_over_the_cap_to_the_sync_s_end(index: KeywordIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first index's batch segments are not merged while it is built: settle() bounds them after."""
    monkeypatch.setattr("core.index.keyword_index.LIVE_MERGE_DOCS", 100)  # the 20 x 30 chunks stand for big segments
    before = _segments(index)
    index.apply([], [_note(i) for i in range(1000, 1000 + BULK_NOTES)])
    assert set(before) < set(_segments(index)) and len(_segments(index)) == 21
    assert index.settle(max_segments=8)
    assert len(_segments(index)) == 8 and index.doc_count() == 600 + BULK_NOTES
    assert not index.settle(max_segments=8)  # nothing left to do: no commit


def test_settling_merges_the_smallest_into_one_down_to_the_bound() -> None:
    assert settle_plan(sizes(5, 1_000, 3, 1_000, 7), 5) == ([], [])
    assert settle_plan(sizes(5, 1_000, 3, 1_000, 7), 3) == ([0, 2, 4], [])  # 5 - 3 + 1 merged: 3 left
    assert settle_plan(sizes(5, 1_000, 3, 1_000, 7), 1) == ([0, 1, 2, 3, 4], [])
    # an empty segment is dropped and does not count; reading cost (deleted chunks too) picks the smallest
    shrunk = [SegmentSize(900, 0), SegmentSize(800, 2), SegmentSize(10, 10), SegmentSize(20, 20), SegmentSize(500, 500)]
    assert settle_plan(shrunk, 2) == ([2, 3, 4], [0])


def test_a_sync_settles_and_a_live_edit_does_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the indexer: a sync of many batches ends with the bound; an edit after it merges nothing big."""
    monkeypatch.setattr(mp, "FACTOR", 1_000)  # no tier ever fills: only settle() merges
    monkeypatch.setattr("core.index.intake.BATCH", 5)  # a segment per 5 notes
    monkeypatch.setattr("core.index.keyword_index.MAX_SEGMENTS", 3)
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(40):
        (root / f"n{i:02d}.md").write_text(f"# Note {i}\n\nA short note about zanzibar number {i}.\n", encoding="utf-8")
    cfg = EngineConfig(vaults=(VaultConfig(name="v", root=str(root)),))
    vi = VaultIndex(cfg.vaults[0], AppPaths(tmp_path / "home"), cfg)
    vi.sync()
    assert len(_segments(vi.keyword)) == 3 and vi.keyword.doc_count() == 40
    (root / "n07.md").write_text("# Note 7\n\nEdited: zanzibar and quokka.\n", encoding="utf-8")
    vi.update_paths(["n07.md"], persist=False)
    assert len(_segments(vi.keyword)) == 4  # the edit's own segment; the merge waits for a sync
    vi.sync()  # nothing changed on disk since: nothing touched, nothing merged
    assert len(_segments(vi.keyword)) == 4
    vi.close()


def test_live_edits_keep_the_segment_count_bounded(index: KeywordIndex) -> None:
    counts = []
    for i in range(3 * FACTOR):
        index.apply([f"n{i:04d}.md"], [_note(i)])
        counts.append(len(_segments(index)))
    assert max(counts) <= 20 + FACTOR  # tiny segments are merged as they make a full tier
    assert index.doc_count() == 600
