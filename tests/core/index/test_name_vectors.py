"""Each note's name (folders, title, aliases) in the embedding space: which texts, stored without pickle, re-used."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.index import name_vectors as nv


def _embed(texts: list[str]) -> np.ndarray:
    """A toy model: a text's vector is its letters' counts (similar spelling → near)."""
    out = np.zeros((len(texts), 26), dtype=np.float32)
    for i, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[i, ord(ch) - 97] += 1
    return out


def test_a_notes_name_is_its_folders_then_its_title() -> None:
    assert nv.note_name("Queries/Global Query.md", "Global Query") == "Queries Global Query"
    assert (
        nv.note_name("Getting Started/Statuses/Core Statuses.md", "Core Statuses")
        == "Getting Started Statuses Core Statuses"
    )
    assert nv.note_name("Intro.md", "") == "Intro"  # no title: the file's name
    assert nv.note_name("lang.rust.ownership.md", "Moving values") == "lang rust ownership Moving values"


def test_aliases_are_further_names_of_the_same_note() -> None:
    rows = nv.names_of(
        {"Queries/Comments.md": "Comments", "Start/Dates.md": "Dates", "Loose.md": "Loose"},
        lambda rel: ("Remarks", "Comments") if "Comm" in rel else (),
    )
    assert rows == [
        ("Queries/Comments.md", "Queries Comments"),
        ("Queries/Comments.md", "Queries Remarks"),
        ("Start/Dates.md", "Start Dates"),
    ]  # a loose note at the root has no name to compare


def test_a_notes_similarity_is_its_nearest_name() -> None:
    built = nv.build([("a.md", "zzzz"), ("a.md", "remark"), ("b.md", "dates")], _embed, "toy")
    assert built is not None
    query = _embed(["remarks"])[0]
    sims = built.similarities(query / np.linalg.norm(query), ["a.md", "b.md", "unnamed.md"])
    assert set(sims) == {"a.md", "b.md"}
    assert sims["a.md"] > 0.9 > sims["b.md"]  # "remark" counts for a.md, not its other name


def test_names_are_saved_without_pickle_and_only_new_names_embedded(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def counting(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return _embed(texts)

    rows = [("Queries/Comments.md", "Queries Comments"), ("Dates.md", "Dates")]
    assert nv.refresh(tmp_path, rows, counting, "toy")
    assert not nv.refresh(tmp_path, rows, counting, "toy")  # unchanged: nothing written
    assert nv.refresh(tmp_path, [*rows, ("Layout.md", "Layout")], counting, "toy")
    assert calls[-1] == ["Layout"]  # only the new name
    loaded = nv.cached(tmp_path)
    assert loaded is not None and loaded.notes == ("Queries/Comments.md", "Dates.md", "Layout.md")
    with np.load(tmp_path / nv.FILE_NAME, allow_pickle=False) as data:
        assert data["matrix"].dtype == np.float16
    assert nv.refresh(tmp_path, rows, counting, "other-model")  # another model: embedded again
    assert calls[-1] == ["Queries Comments", "Dates"]


def test_an_unreadable_file_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / nv.FILE_NAME).write_bytes(b"not a numpy file")
    assert nv.load(tmp_path) is None
