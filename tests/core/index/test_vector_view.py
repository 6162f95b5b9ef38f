"""A search-only process opens a vault's vectors from the record's compact view (core.index.vector_view)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.index import vector_view
from core.index.vector_index import VectorIndex
from core.index.vector_store import VaultVectors, lean_opens
from core.index.vector_view import VIEW_NAME, read_view
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder

QUERIES = [
    SearchRequest("sourdough loaf fridge", mode="semantic"),
    SearchRequest("release checklist", mode="hybrid"),
    SearchRequest("sourdough salary", mode="semantic", filters=SearchFilters(allow_restricted=True)),
    SearchRequest("tomatoes", mode="semantic", filters=SearchFilters(folders=("food",))),
]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "food").mkdir(parents=True)
    (root / "work").mkdir()
    (root / "food" / "bread.md").write_text("# Bread\n\nSourdough loaf rests overnight in the fridge.\n\n## Baking\n\nHot oven.\n")
    (root / "food" / "soup.md").write_text("# Soup\n\nRoast tomatoes at 220 C, then blend.\n")
    (root / "work" / "deploy.md").write_text("# Deploy\n\nThe release goes out on Fridays after the checklist.\n")
    (root / "work" / "secret.md").write_text("---\nconfidentiality: restricted\n---\n# Pay\n\nSourdough salary bands.\n")
    return root


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records count as settled at once (the real check waits 2 s after a write)."""
    monkeypatch.setattr(vector_view, "SETTLE_NS", -1)


@pytest.fixture
def lean() -> Iterator[None]:
    lean_opens()
    try:
        yield
    finally:
        lean_opens(False)


def _engine(home: Path) -> Engine:
    return Engine(AppPaths(home), embedder_factory=lambda vc: BagOfWordsEmbedder())


def _indexed(home: Path, vault: Path) -> str:
    engine = _engine(home)
    name = engine.add_vault(vault).name
    engine.sync([name])
    engine.close()
    return name


def _answers(home: Path) -> list[list[tuple[str, int, float]]]:
    engine = _engine(home)
    try:
        return [[(h.chunk.rel_path, h.chunk.ordinal, round(h.score, 9)) for h in engine.search(q).hits] for q in QUERIES]
    finally:
        engine.close()


def _opened(home: Path, name: str) -> VaultVectors:
    vv = _engine(home).vectors_for(name)
    assert vv is not None
    return vv


def test_a_lean_open_searches_from_the_view_exactly_as_a_full_open(tmp_path: Path, vault: Path, settled: None) -> None:
    home = tmp_path / "home"
    name = _indexed(home, vault)
    full = _answers(home)
    full_vv = _opened(home, name)
    lean_opens()
    try:
        assert _answers(home) == full  # this open read the record and left its view
        assert (home / "indexes" / name / VIEW_NAME).is_file()
        vv = _opened(home, name)
        assert vv._view is not None and vv._key_hash is None and vv._rows_map is None  # nothing big read
        assert (vv.embedded, vv.desired, vv.fraction_complete, vv.rows_from_file) == (
            full_vv.embedded,
            full_vv.desired,
            full_vv.fraction_complete,
            full_vv.rows_from_file,
        )
        assert _answers(home) == full
        assert vv.key_hash == full_vv.key_hash  # read from the record when something asks
        assert vv._rows_to_chunk == full_vv._rows_to_chunk
    finally:
        lean_opens(False)


def test_a_view_of_an_older_record_is_not_used(tmp_path: Path, vault: Path, settled: None, lean: None) -> None:
    home = tmp_path / "home"
    name = _indexed(home, vault)
    _answers(home)  # leaves the view
    directory = home / "indexes" / name
    assert read_view(directory) is not None
    lean_opens(False)
    (vault / "food" / "stew.md").write_text("# Stew\n\nBeans and sourdough crumbs simmer for an hour.\n")
    _indexed(home, vault)  # the record is written again
    assert read_view(directory) is None
    lean_opens()
    vv = _opened(home, name)
    assert vv._view is None and "food/stew.md" in {rel for rel, _ in vv._rows_to_chunk.values()}
    assert read_view(directory) is not None  # the lean open left a view of the new record


def test_a_record_written_just_now_gets_no_view(tmp_path: Path, vault: Path, lean: None) -> None:
    """Within the timestamps' granularity a later write could keep the stamp: no view for such a record."""
    home = tmp_path / "home"
    name = _indexed(home, vault)
    assert _answers(home)[0]
    assert not (home / "indexes" / name / VIEW_NAME).exists()


def test_a_damaged_view_is_ignored(tmp_path: Path, vault: Path, settled: None, lean: None) -> None:
    home = tmp_path / "home"
    name = _indexed(home, vault)
    expected = _answers(home)
    view = home / "indexes" / name / VIEW_NAME
    data = view.read_text()
    for damaged in ("{not json", data.replace('"keys":"', '"keys":"AAAA', 1), data.replace('"count":', '"count":1', 1)):
        view.write_text(damaged)
        vv = _opened(home, name)
        assert vv._view is None  # read the long way
        assert _answers(home) == expected


def test_a_view_names_each_keys_chunk_and_nothing_else(tmp_path: Path, vault: Path, settled: None, lean: None) -> None:
    home = tmp_path / "home"
    name = _indexed(home, vault)
    _answers(home)
    view = read_view(home / "indexes" / name)
    assert view is not None
    rows = view.rows()
    assert rows and all(view.chunk_of(k) == ref for k, ref in rows.items())
    assert view.chunk_of(int(view.keys.max()) + 1) is None and view.chunk_of(0) is None


def test_a_loaded_index_makes_its_key_map_only_when_asked(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((40, 8)).astype(np.float32)
    index = VectorIndex(8, exact_below=0)  # HNSW, as a big vault is searched
    index.add(range(1, 41), vectors)
    index.save(tmp_path / "v.usearch")
    loaded = VectorIndex.load(tmp_path / "v.usearch", exact_below=0)
    assert len(loaded) == 40 and loaded.search(vectors[4], 1)[0][0] == 5
    assert loaded._row_of is None
    assert 7 in loaded and 99 not in loaded
    loaded.remove([7])
    loaded.add([99], vectors[:1])
    assert len(loaded) == 40 and 7 not in loaded
    assert sorted(loaded.keys().tolist()) == [k for k in range(1, 41) if k != 7] + [99]
