"""A vault's first keyword index, built in a child process."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest

REPO = Path(__file__).resolve().parents[3]


def test_first_index_is_built_in_a_child_and_is_searchable_here(tmp_path: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    engine.add_vault(REPO / "resources" / "sample-vault")
    seen: list[tuple[int, int, str]] = []
    report = engine.sync(bulk_in_child=True, progress=lambda d, t, p: seen.append((d, t, p)))[0]
    assert report.keyword.added == report.keyword.documents == 36
    assert seen and seen[-1][0] == seen[-1][1]  # progress came back from the child
    hits = engine.search(SearchRequest("sourdough", mode="keyword")).hits
    assert hits and hits[0].chunk.rel_path == "Recipes/Sourdough loaf.md"
    assert not engine.index_for(report.keyword.vault).is_dirty
    again = engine.sync(bulk_in_child=True)[0].keyword  # an existing index syncs in-process
    assert again.added == again.changed == 0


def test_cancel_reaches_the_child_and_what_it_did_is_kept(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(400):
        (vault / f"n{i:03}.md").write_text(f"# Note {i}\n\nword{i} filler text\n")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    engine.add_vault(vault)
    cancel = threading.Event()

    def stop_early(done: int, total: int, phase: str) -> None:
        if done >= 50:
            cancel.set()

    report = engine.sync(bulk_in_child=True, progress=stop_early, cancel=cancel)[0].keyword
    assert report.cancelled and 0 < report.added < 400
    finished = engine.sync()[0].keyword  # the next sync completes it without redoing the first part
    assert finished.documents == 400 and finished.added == 400 - report.added


def test_a_failing_child_falls_back_to_indexing_in_process(tmp_path: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    vault = tmp_path / "gone"
    vault.mkdir()
    engine.add_vault(vault)
    vault.rmdir()  # the child fails; the in-process sync then reports it the usual way
    with pytest.raises(FileNotFoundError):
        engine.sync(bulk_in_child=True)
