"""Closing a keyword index releases its files without breaking it or a search beside it."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from core.base.models import SearchFilters
from core.index.keyword_index import KeywordHit, KeywordIndex
from core.search.query import parse_query
from core.vault.chunker import ChunkLimits
from core.vault.notes import parse_note


@pytest.fixture()
def index(tmp_path: Path) -> KeywordIndex:
    ki = KeywordIndex(tmp_path / "whoosh")
    notes = {"a.md": "# Spices\n\nZanzibar cloves and nutmeg.\n", "b.md": "# Boats\n\nA dhow sails to Zanzibar.\n"}
    ki.apply([], [parse_note("v", rel, text.encode(), size=len(text), mtime_ns=0, limits=ChunkLimits()) for rel, text in notes.items()])
    return ki


def _search(ki: KeywordIndex) -> list[str]:
    return [h.chunk_id for h in ki.search(parse_query("zanzibar").query, SearchFilters(), 10)]


def _open_readers(ki: KeywordIndex) -> list[Any]:
    return [s for s in ki.open_searchers() if not s.reader().is_closed]


def test_a_closed_index_searches_again(index: KeywordIndex) -> None:
    before = _search(index)
    index.close()
    assert _search(index) == before  # reopened, not "ReaderClosed"
    assert index.doc_count() == 2


def test_close_twice_is_harmless(index: KeywordIndex) -> None:
    _search(index)
    index.close()
    index.close()
    assert _open_readers(index) == []


def test_close_waits_for_a_search_on_another_thread(index: KeywordIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """remove_vault or reload_config closing the index the query thread is searching in."""
    expected = _search(index)
    index.close()
    inside, closed = threading.Event(), threading.Event()
    real_top = index._fast.top

    def paused_top(*args: Any, **kwargs: Any) -> Any:
        inside.set()  # the search holds its searcher; now another thread closes the index
        assert closed.wait(10)
        return real_top(*args, **kwargs)  # reads postings through the searcher close() was asked to close

    monkeypatch.setattr(index._fast, "top", paused_top)
    found: list[list[str]] = []
    failed: list[BaseException] = []

    def query() -> None:
        try:
            found.append(_search(index))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failed.append(exc)

    thread = threading.Thread(target=query)
    thread.start()
    assert inside.wait(10)
    index.close()  # from this thread, while the other one is mid-search
    closed.set()
    thread.join(10)
    assert failed == [] and found == [expected]
    assert _open_readers(index) == []  # the search's searcher was closed once it was done


def test_hits_are_the_same_after_close_on_two_threads(index: KeywordIndex) -> None:
    results: list[list[KeywordHit]] = []

    def run() -> None:
        for _ in range(20):
            results.append(index.search(parse_query("zanzibar").query, SearchFilters(), 10))
            index.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 40 and all([h.chunk_id for h in r] == [h.chunk_id for h in results[0]] for r in results)
