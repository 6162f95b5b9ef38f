"""The first embedding pass: one short stand-in vector per note, replaced by the passages' own."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from core.base.paths import AppPaths
from core.engine import Engine
from core.index.note_vectors import NOTE_INPUT_CHARS, NOTE_PHASE, is_provisional, note_input
from core.search.search import SearchRequest
from core.status import semantic_coverage
from tests.helpers import BagOfWordsEmbedder


class Recording(BagOfWordsEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed_documents(self, texts, progress=None, cancel=None):  # type: ignore[no-untyped-def, override]
        self.seen.extend(texts)
        return super().embed_documents(texts)


def long_vault(root: Path, notes: int = 6) -> Path:
    """Notes of three long sections each, n05 the most recently edited."""
    root.mkdir()
    for i in range(notes):
        sections = "\n\n".join(f"## Part {k} of {i}\n\n" + f"marker{i}x{k} " + "filler words " * 120 for k in range(3))
        note = root / f"n{i:02}.md"
        note.write_text(f"---\naliases: [Nick{i}]\n---\n# Note {i}\n\n{sections}\n", encoding="utf-8")
        os.utime(note, ns=(1_000_000_000 * (1_000 + i), 1_000_000_000 * (1_000 + i)))
    return root


def stop_after_note_pass(engine: Engine, name: str) -> None:
    """Embed until every note has its stand-in vector, then stop (as a user searching early sees it)."""
    cancel = threading.Event()

    def progress(done: int, total: int, phase: str) -> None:
        if phase == NOTE_PHASE and done == total:
            cancel.set()

    stats = engine.embed_vault(name, progress=progress, cancel=cancel)
    assert stats is not None and stats.cancelled


def test_a_notes_short_text_names_it_outlines_it_and_starts_it_within_the_budget() -> None:
    text = note_input("Bread", ("Sourdough",), ["Bread", "Starter", "Baking day"], "Feed the starter at night. " * 40)
    lines = text.split("\n")
    assert lines[0] == "Bread · Sourdough"
    assert lines[1] == "Starter · Baking day"  # the title is not repeated as a heading
    assert lines[2].startswith("Feed the starter at night.")
    assert len(text) <= NOTE_INPUT_CHARS
    assert text.endswith("night.") or text.endswith(("the", "starter", "at", "Feed"))  # cut between words
    assert note_input("", (), [], "short body") == "short body"


def test_every_note_gets_one_short_vector_first_newest_first(tmp_path: Path) -> None:
    embedder = Recording()
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: embedder)
    name = engine.add_vault(long_vault(tmp_path / "vault")).name
    engine.sync([name], embed=False)
    stop_after_note_pass(engine, name)
    files = engine.index_for(name).files
    first = embedder.seen[: len(files)]
    assert [t.split("\n")[0] for t in first] == [f"Note {i} · Nick{i}" for i in range(5, -1, -1)]
    assert all(len(t) <= NOTE_INPUT_CHARS and f"Part 0 of {i}" in t for t, i in zip(first, range(5, -1, -1)))
    vv = engine.vectors_for(name)
    assert vv is not None
    assert len(vv.key_hash) == len(files) and all(is_provisional(h) for h in vv.key_hash.values())
    assert vv.embedded == 0 and vv.fraction_complete == 0.0  # no passage has its own vector yet
    cov = semantic_coverage(vv, None, files)
    assert cov.embedded == 0 and cov.state.value == "partial"
    hits = engine.search(SearchRequest("nick3", mode="semantic", k=3)).hits  # an alias: in the note's text, in no passage
    assert hits and hits[0].chunk.rel_path == "n03.md"


def test_the_passage_pass_replaces_every_stand_in_with_the_passages_own_vector(tmp_path: Path) -> None:
    embedder = Recording()
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: embedder)
    name = engine.add_vault(long_vault(tmp_path / "vault")).name
    engine.sync([name], embed=False)
    stop_after_note_pass(engine, name)
    engine.flush([name])
    engine.close()

    again = Recording()  # a restart: the stand-ins were saved and cover the vault meanwhile
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: again)
    vv = engine.vectors_for(name)
    assert vv is not None and len(vv.index) == 6 and vv.embedded == 0
    engine.embed_vault(name)
    assert not any(t.startswith("Note ") and " · Nick" in t for t in again.seen)  # no note embedded twice
    chunks = sum(len(rec.chunks) for rec in engine.index_for(name).files.values())
    assert len(again.seen) == chunks and vv.embedded == chunks == len(vv.index)
    assert not any(is_provisional(h) for h in vv.key_hash.values())
    for k, h in vv.key_hash.items():  # each key holds its passage's vector, as cached
        cached = vv.cache.get(h)
        assert cached is not None and np.allclose(vv.index.vector(k), cached, atol=1e-3)


def test_a_stand_in_whose_opening_changed_is_dropped_and_a_live_edit_embeds_passages(tmp_path: Path) -> None:
    embedder = Recording()
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: embedder)
    vault = long_vault(tmp_path / "vault")
    name = engine.add_vault(vault).name
    engine.sync([name], embed=False)
    stop_after_note_pass(engine, name)
    note = vault / "n02.md"
    note.write_text(note.read_text(encoding="utf-8").replace("marker2x0", "rewritten opening"), encoding="utf-8")
    embedder.seen.clear()
    engine.update_notes(name, ["n02.md"])
    vv = engine.vectors_for(name)
    assert vv is not None
    rows = {vv._rows_to_chunk[k][0]: h for k, h in vv.key_hash.items() if vv._rows_to_chunk[k][0] == "n02.md"}
    assert rows and not any(is_provisional(h) for h in rows.values())  # the edited note: its passages, no stand-in
    assert not any(" · Nick" in t for t in embedder.seen)  # the live path embeds no note texts
    others = [h for k, h in vv.key_hash.items() if vv._rows_to_chunk[k][0] != "n02.md"]
    assert len(others) == 5 and all(is_provisional(h) for h in others)  # the rest keep theirs


def test_a_note_of_one_passage_is_embedded_before_the_openings_that_already_have_a_stand_in(tmp_path: Path) -> None:
    """Such a note gets no stand-in, so it leads the passage pass: every note has a vector soonest."""
    embedder = Recording()
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: embedder)
    vault = long_vault(tmp_path / "vault")
    short = vault / "short.md"
    short.write_text("# Short\n\nmarkershort one paragraph about a kettle.\n", encoding="utf-8")
    os.utime(short, ns=(1_000_000_000 * 500, 1_000_000_000 * 500))  # older than every long note
    name = engine.add_vault(vault).name
    engine.sync([name], embed=False)
    stop_after_note_pass(engine, name)
    assert not any("markershort" in t for t in embedder.seen)  # no stand-in for a one-passage note
    embedder.seen.clear()
    engine.embed_vault(name)
    assert "markershort" in embedder.seen[0]  # the passage pass starts with it, though it is the oldest note
    assert "marker5x0" in embedder.seen[1]  # then the openings, newest first


def test_a_note_of_one_long_passage_gets_a_stand_in_and_a_short_one_does_not(tmp_path: Path) -> None:
    """A stand-in is cheaper than a long passage, not than a short one (tldr's pages: one short passage each)."""
    embedder = Recording()
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: embedder)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "long.md").write_text("# Long\n\n" + "markerlong words about kettles " * 28 + "\n", encoding="utf-8")  # ~870 bytes
    (vault / "short.md").write_text("# Short\n\nmarkershort a few words.\n", encoding="utf-8")
    name = engine.add_vault(vault).name
    engine.sync([name], embed=False)
    files = engine.index_for(name).files
    assert len(files["long.md"].chunks) == 1 and len(files["short.md"].chunks) == 1
    stop_after_note_pass(engine, name)
    assert len(embedder.seen) == 1 and embedder.seen[0].startswith("Long")  # the note pass: the long note's stand-in
    assert len(embedder.seen[0]) <= NOTE_INPUT_CHARS
