"""A cold `cairn search` answers exactly as before its shortcuts, with the real model on a small vault.

A new query loads the model (from the prepared copy with packed weights), a repeated one
reads its vector from disk and loads no model, and once the vector record has settled the
search opens its compact view instead of the record (core.index.vector_view). Each of these
must leave the answer as it was: same hits, same order, same scores to the last digit printed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.cli.main import main
from core.index import vector_view

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tasks-docs-sample"
QUERIES = [
    ("hybrid", "recurring tasks due dates"),
    ("semantic", "how do I hide done items"),
    ("hybrid", "filter by priorty"),  # a typo: the spelling correction runs too
]


@pytest.fixture
def indexed(tmp_path: Path, cairn_home: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[Path]:
    notes = sorted(FIXTURE.rglob("*.md"))[:5]
    if len(notes) < 5:
        pytest.skip("the tasks-docs sample is missing")
    vault = tmp_path / "tasks"
    for note in notes:
        (vault / note.relative_to(FIXTURE)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(note, vault / note.relative_to(FIXTURE))
    assert main(["index", "--vault", str(vault), "--quiet", "--json"]) == 0
    embedding = json.loads(capsys.readouterr().out)["vaults"][0]["embedding"]
    if not embedding or embedding["embedded"] == 0:
        pytest.skip("the built-in embedding model is not available here")
    yield cairn_home


def _answer(capsys: pytest.CaptureFixture[str], mode: str, query: str) -> dict[str, Any]:
    assert main(["search", "--mode", mode, "--json", query]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)
    answer.pop("timings_ms", None)
    return answer


def test_new_repeated_and_view_opened_searches_answer_alike(
    indexed: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [_answer(capsys, mode, query) for mode, query in QUERIES]  # new queries, the record read whole
    assert all(a["hits"] for a in first) and first[2]["correction"] is not None
    assert not list(indexed.glob("indexes/*/" + vector_view.VIEW_NAME))  # the record had not settled
    monkeypatch.setattr(vector_view, "SETTLE_NS", -1)
    assert [_answer(capsys, mode, query) for mode, query in QUERIES] == first  # repeated; this run leaves the view
    assert list(indexed.glob("indexes/*/" + vector_view.VIEW_NAME))
    assert [_answer(capsys, mode, query) for mode, query in QUERIES] == first  # repeated, opened from the view
    shutil.rmtree(indexed / "cache" / "query-vectors")
    assert [_answer(capsys, mode, query) for mode, query in QUERIES] == first  # new again, from the view
