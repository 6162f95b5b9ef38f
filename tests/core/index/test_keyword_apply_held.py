"""Commits of notes the index cannot hold yet look for nothing to delete (a parallel build's later commits)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.base.models import Document
from core.index.keyword_index import KeywordIndex
from core.index.keyword_store import KeywordStore
from core.index.segment_worker import BuiltSegment
from core.vault.notes import parse_note


def _note(rel: str, text: str) -> Document:
    return parse_note("v", rel, text.encode(), size=len(text), mtime_ns=0)


@pytest.fixture
def deletes(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every `delete_notes` call's note paths (each call opens the writer's searcher)."""
    calls: list[list[str]] = []
    real = KeywordStore.delete_notes

    def spy(writer: Any, rel_paths: Any) -> None:
        calls.append(list(rel_paths))
        real(writer, calls[-1])

    monkeypatch.setattr(KeywordStore, "delete_notes", staticmethod(spy))
    return calls


def test_new_notes_in_a_later_commit_delete_nothing(tmp_path: Path, deletes: list[list[str]]) -> None:
    index = KeywordIndex(tmp_path / "ix")
    index.apply([], [_note("a.md", "# A\n\nalpha words")], held={})
    index.apply([], [_note("b.md", "# B\n\nbeta words")], held={"a.md": None})
    assert deletes == []  # b.md is not held: no searcher opened to look for it
    assert index.doc_count() == 2


def test_held_notes_are_replaced(tmp_path: Path, deletes: list[list[str]]) -> None:
    index = KeywordIndex(tmp_path / "ix")
    index.apply([], [_note("a.md", "# A\n\nalpha words")], held={})
    index.apply([], [_note("a.md", "# A\n\ngamma words"), _note("c.md", "# C\n\nmore")], held={"a.md": None})
    assert deletes == [["a.md"]]  # only the held note is looked for
    assert index.doc_count() == 2  # a.md's old chunk went


def test_without_held_every_added_note_is_looked_for(tmp_path: Path, deletes: list[list[str]]) -> None:
    index = KeywordIndex(tmp_path / "ix")
    index.apply([], [_note("a.md", "# A\n\nalpha")])
    index.apply([], [_note("a.md", "# A\n\nbeta"), _note("d.md", "# D\n\ndelta")])
    assert deletes == [["a.md", "d.md"]]
    assert index.doc_count() == 2


def test_a_built_segment_replacing_nothing_deletes_nothing(tmp_path: Path, deletes: list[list[str]]) -> None:
    index = KeywordIndex(tmp_path / "ix")
    index.apply([], [_note("a.md", "# A\n\nalpha")], held={})
    folder = tmp_path / "scratch"
    folder.mkdir()
    segment, files = KeywordStore.scratch(str(folder)).build_segment([_note("b.md", "# B\n\nbeta")], str(folder))
    index.add_built(BuiltSegment(segment, str(folder), files), [])
    assert deletes == []
    assert index.doc_count() == 2
