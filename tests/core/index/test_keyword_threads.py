"""Searches from several threads at once give the single-threaded results.

The index is read from its files now, not from in-memory copies (see KeywordIndex):
Whoosh reads a file with seek + read on one file object, so a searcher shared between
threads would hand each thread the other's bytes. Every thread has its own searcher.
"""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters, chunk_id
from core.index.keyword_index import KeywordIndex
from core.search.query import parse_query
from core.vault.chunker import ChunkLimits
from core.vault.notes import parse_note
from tests.fixture_notes import note_texts

QUERIES = (
    "sqlite full text search",
    "github actions workflow",
    '"pip install"',  # a phrase: Whoosh's own matchers read the postings, not bm25_fast
    "docker container python",
    "javascript fetch json",
    "postgres query plan",
    "datasette plugin",
    "bash loop over files",
)
THREADS = 4
ROUNDS = 6



@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeywordIndex]:
    """300 generated notes (tests/fixture_notes.py) written in three commits: several segments."""
    notes = note_texts(300).items()
    docs = [parse_note("til", rel, text.encode(), size=len(text), mtime_ns=0, limits=ChunkLimits()) for rel, text in notes]
    ki = KeywordIndex(tmp_path_factory.mktemp("whoosh"))
    for start in range(0, len(docs), 100):
        ki.apply([], docs[start : start + 100])
    yield ki
    ki.close()


def _run(ki: KeywordIndex, query: str) -> list[tuple[str, float, str]]:
    hits = ki.search(parse_query(query).query, SearchFilters(), 10)
    stored = ki.stored([h.chunk_id for h in hits])  # stored fields: another file read per hit
    return [(h.chunk_id, round(h.score, 6), stored[h.chunk_id].body[:80]) for h in hits]


def test_opening_a_searcher_does_not_copy_the_index_into_memory(index: KeywordIndex) -> None:
    """Whoosh copies each part of an mmapped compound segment into a BytesIO; read from the file instead."""
    size = sum(p.stat().st_size for p in index.directory.iterdir())
    assert size > 500_000  # enough index for a copy to show
    tracemalloc.start()
    try:
        searcher = index._ix.searcher()
        hits = index.search(parse_query("sqlite full text search").query, SearchFilters(), 10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    searcher.close()
    assert hits
    assert peak < size * 0.3, (peak, size)


def test_searches_on_several_threads_equal_the_single_threaded_results(index: KeywordIndex) -> None:
    expected = {q: _run(index, q) for q in QUERIES}
    assert all(expected.values()), {q: len(v) for q, v in expected.items()}
    failures: list[str] = []
    start = threading.Barrier(THREADS)

    def worker(offset: int) -> None:
        start.wait()
        try:
            for i in range(ROUNDS * len(QUERIES)):
                q = QUERIES[(i + offset) % len(QUERIES)]
                got = _run(index, q)
                if got != expected[q]:
                    failures.append(f"{q!r}: {got[:2]} != {expected[q][:2]}")
        except Exception as exc:  # noqa: BLE001 - a torn read raises; the test reports it
            failures.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_a_thread_sees_a_commit_made_on_another(index: KeywordIndex, tmp_path: Path) -> None:
    before = _run(index, "zebracorn")
    assert before == []
    note = parse_note("til", "zz/zebracorn.md", b"# Zebracorn\n\nA zebracorn grazes.\n", size=33, mtime_ns=1, limits=ChunkLimits())
    writer = threading.Thread(target=index.apply, args=([], [note]))
    writer.start()
    writer.join()
    try:
        assert [cid for cid, _, _ in _run(index, "zebracorn")] == [chunk_id("til", "zz/zebracorn.md", 0)]
    finally:
        index.apply(["zz/zebracorn.md"], [])
