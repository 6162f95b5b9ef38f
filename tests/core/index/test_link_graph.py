"""The link graph lives with the index: built by sync, moved by live updates, persisted, healed."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from tests.helpers import copy_link_vault

V = "link_vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_link_vault(tmp_path)


@pytest.fixture
def engine(vault: Path, cairn_home: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths(cairn_home), embedder_factory=None)
    eng.add_vault(vault, name=V)
    eng.sync(embed=False)
    yield eng
    eng.close()


def backlink_sources(engine: Engine, rel: str) -> set[str]:
    return {r.source for r in engine.index_for(V).links.backlinks(rel)}


def test_sync_builds_backlinks_and_keeps_dead_links(engine: Engine) -> None:
    graph = engine.index_for(V).links
    assert backlink_sources(engine, "Recipes.md") == {"Home.md", "café.md"}
    assert backlink_sources(engine, "Home.md") == {"Archive/Plan.md", "Projects/Plan.md", "dendron.sub.topic.md"}
    dead = {(r.source, r.link.target) for r in graph.unresolved()}
    assert dead == {("Home.md", "Missing note"), ("dendron.sub.topic.md", "dendron.sub")}
    assert [r.attachment for r in graph.outgoing("Home.md") if r.link.target == "cat.png"] == [True]


def test_a_new_note_answers_a_dead_link_and_a_deleted_one_breaks_it_again(engine: Engine, vault: Path) -> None:
    (vault / "Missing note.md").write_text("# Missing no more\n")
    engine.update_notes(V, ["Missing note.md"])
    assert backlink_sources(engine, "Missing note.md") == {"Home.md"}
    (vault / "Missing note.md").unlink()
    engine.update_notes(V, ["Missing note.md"])
    assert ("Home.md", "Missing note") in {(r.source, r.link.target) for r in engine.index_for(V).links.unresolved()}


def test_a_rename_moves_the_notes_own_links_and_breaks_links_to_its_old_name(engine: Engine, vault: Path) -> None:
    (vault / unicodedata.normalize("NFD", "café.md")).rename(vault / "Coffee.md")  # the fixture's name is NFD on disk
    engine.update_notes(V, ["café.md", "Coffee.md"])
    assert backlink_sources(engine, "Recipes.md") == {"Home.md", "Coffee.md"}
    graph = engine.index_for(V).links
    assert "café.md" not in graph
    assert ("Home.md", "Café") in {(r.source, r.link.target) for r in graph.unresolved()}


def test_the_graph_is_persisted_with_the_manifest_and_read_back(engine: Engine, vault: Path, cairn_home: Path) -> None:
    (vault / "Journal" / "2024-01-02.md").write_text("# Tuesday\n\nMore [[Recipes]].\n")
    engine.update_notes(V, ["Journal/2024-01-02.md"])  # the live path: on disk only after flush
    engine.flush()
    engine.close()
    again = Engine(AppPaths(cairn_home), embedder_factory=None)
    try:
        assert {r.source for r in again.index_for(V).links.backlinks("Recipes.md")} == {"Home.md", "café.md", "Journal/2024-01-02.md"}
    finally:
        again.close()


def test_an_index_without_a_graph_gets_one_on_the_next_sync(engine: Engine, cairn_home: Path) -> None:
    path = engine.index_for(V).dir / "links.json"
    engine.close()
    path.unlink()  # an index built before links existed, or a lost file
    again = Engine(AppPaths(cairn_home), embedder_factory=None)
    try:
        assert len(again.index_for(V).links) == 0
        report = again.sync(embed=False)[0]
        assert report.keyword.changed_paths == ()  # no note re-indexed, only their links read
        assert {r.source for r in again.index_for(V).links.backlinks("Recipes.md")} == {"Home.md", "café.md"}
        assert path.exists()
    finally:
        again.close()


def test_a_damaged_graph_file_is_rebuilt_not_fatal(engine: Engine, cairn_home: Path) -> None:
    path = engine.index_for(V).dir / "links.json"
    engine.close()
    path.write_text('{"format": "links-1", "notes": {"Home.md": {"v": 1}}')
    again = Engine(AppPaths(cairn_home), embedder_factory=None)
    try:
        again.sync(embed=False)
        assert {r.source for r in again.index_for(V).links.backlinks("Recipes.md")} == {"Home.md", "café.md"}
    finally:
        again.close()


def test_a_search_reads_only_the_aliases_and_anything_else_reads_the_whole_graph(
    engine: Engine, cairn_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.index.link_graph as link_graph

    before = engine.index_for(V).links
    named = {rel: before.aliases(rel) for rel in ("Projects/My Notes.md", "Home.md")}
    assert named["Projects/My Notes.md"]  # the fixture gives it aliases
    engine.close()
    read: list[str] = []
    real = link_graph.read_json
    monkeypatch.setattr(link_graph, "read_json", lambda path: read.append(path.name) or real(path))
    again = Engine(AppPaths(cairn_home), embedder_factory=None)
    try:
        graph = again.index_for(V).links
        assert {rel: graph.aliases(rel) for rel in named} == named
        assert read == ["aliases.json"]  # the title boost's aliases, not the 39 MB of a 10k-note vault's links
        assert backlink_sources(again, "Recipes.md") == {"Home.md", "café.md"}
        assert read == ["aliases.json", "links.json"]
        assert {rel: graph.aliases(rel) for rel in named} == named
    finally:
        again.close()


def test_aliases_taken_from_another_links_file_are_not_trusted_and_a_plain_save_writes_them(engine: Engine) -> None:
    from core.index.link_graph import LinkGraph

    vi = engine.index_for(V)
    path = vi.dir / "links.json"
    text = path.read_text(encoding="utf-8")
    assert '"aliases":["MN","Notebook"]' in text
    text = text.replace('"aliases":["MN","Notebook"]', '"aliases":["MX","Notebook"]')
    path.write_text(text, encoding="utf-8")  # rewritten elsewhere (an older Cairn, a crash before aliases.json)
    assert LinkGraph.load(path).aliases("Projects/My Notes.md") == ("MX", "Notebook")
    (vi.dir / "aliases.json").unlink()  # an index from before aliases.json
    graph = LinkGraph.load(path)
    graph.save()  # nothing changed: links.json is left as it is, aliases.json is written beside it
    assert path.read_text(encoding="utf-8") == text
    again = LinkGraph.load(path)
    assert again._unread and again.aliases("Projects/My Notes.md") == ("MX", "Notebook")


def test_a_copied_index_folder_still_lets_a_search_read_only_the_aliases(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restored or copied data folder keeps sizes and mtimes, not inodes: the aliases stay trusted."""
    import shutil

    import core.index.link_graph as link_graph

    copy = tmp_path / "restored"
    shutil.copytree(engine.index_for(V).dir, copy)  # copy2: mtimes kept, every inode new
    read: list[str] = []
    real = link_graph.read_json
    monkeypatch.setattr(link_graph, "read_json", lambda path: read.append(path.name) or real(path))
    graph = link_graph.LinkGraph.load(copy / "links.json")
    assert graph.aliases("Projects/My Notes.md") == ("MN", "Notebook")
    assert read == ["aliases.json"]


def test_the_first_search_to_find_the_aliases_stale_writes_them_for_the_next(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import core.index.link_graph as link_graph

    path = engine.index_for(V).dir / "links.json"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # e.g. copied without its mtime
    before = path.read_bytes()
    read: list[str] = []
    real = link_graph.read_json
    monkeypatch.setattr(link_graph, "read_json", lambda p: read.append(p.name) or real(p))
    first = link_graph.LinkGraph.load(path)
    assert read == ["aliases.json", "links.json"]  # stale: the whole graph, once
    assert first.aliases("Projects/My Notes.md") == ("MN", "Notebook")
    read.clear()
    second = link_graph.LinkGraph.load(path)
    assert read == ["aliases.json"] and second._unread
    assert second.aliases("Projects/My Notes.md") == ("MN", "Notebook")
    assert path.read_bytes() == before  # only aliases.json was written


@pytest.mark.parametrize("left", [b"", b'{"format":"aliases-1","links":[1,', b"\x00" * 64])
def test_aliases_left_empty_or_torn_by_a_power_cut_are_read_from_the_graph_and_written_again(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, left: bytes
) -> None:
    """`aliases.json` is written without an fsync (a cache of `links.json`): what a power cut may
    leave of it instead is never trusted, and the next search writes it again."""
    import core.index.link_graph as link_graph

    vi = engine.index_for(V)
    (vi.dir / "aliases.json").write_bytes(left)
    read = _count_reads(monkeypatch)
    graph = link_graph.LinkGraph.load(vi.dir / "links.json")
    assert graph.aliases("Projects/My Notes.md") == ("MN", "Notebook")
    assert read == ["aliases.json", "links.json"]
    read.clear()
    assert link_graph.LinkGraph.load(vi.dir / "links.json").aliases("Projects/My Notes.md") == ("MN", "Notebook")
    assert read == ["aliases.json"]


def test_a_sync_fsyncs_the_graph_but_not_its_aliases_nor_the_dirty_flag(
    engine: Engine, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph, manifest and health record are replaced durably; the aliases (a checked cache)
    and the dirty flag (only its presence is read) need no fsync."""
    import core.base.atomic as atomic

    made: list[str] = []
    open_now: dict[int, str] = {}  # descriptors are reused from one file to the next
    synced: list[str] = []
    real_mkstemp = atomic.tempfile.mkstemp

    def mkstemp(prefix: str, suffix: str, dir: Path) -> tuple[int, str]:  # noqa: A002 - mkstemp's own name
        fd, name = real_mkstemp(prefix=prefix, suffix=suffix, dir=dir)
        made.append(Path(name).name.split(".")[1])  # .NAME.json.XXXX.tmp
        open_now[fd] = made[-1]
        return fd, name

    def fsync(fd: int) -> None:
        synced.append(open_now[fd])

    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(atomic.os, "fsync", fsync)
    (vault / "Home.md").write_text("# Home\n\nNow with [[Recipes]] only.\n", encoding="utf-8")
    engine.sync(embed=False)
    assert sorted(made) == ["aliases", "dirty", "info", "links", "manifest"]
    assert sorted(synced) == ["info", "links", "manifest"]


def test_a_second_save_of_an_unchanged_graph_reads_nothing_back(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync saves the graph after its commits and again after healing it: the second save knows
    the aliases it wrote are in step, unless `links.json` changed since (another process)."""
    import os


    graph = engine.index_for(V).links
    graph.dirty = True
    graph.save()
    read = _count_reads(monkeypatch)
    graph.save()
    assert read == []
    st = graph.path.stat()
    os.utime(graph.path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # rewritten elsewhere
    graph.save()
    assert read == ["aliases.json"]


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files the link graph reads from here on, in order."""
    import core.index.link_graph as link_graph

    read: list[str] = []
    real = link_graph.read_json

    def read_json(path: Path) -> object:
        read.append(path.name)
        return real(path)

    monkeypatch.setattr(link_graph, "read_json", read_json)
    return read
