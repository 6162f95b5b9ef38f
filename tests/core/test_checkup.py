"""The vault check-up on tests/fixtures/structured_vault (and obsidian-tasks-docs when present):
each finding kind, read-only, through the CLI and MCP."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine
from core.structured.checkup import Checkup, checkup_json, vault_checkup
from tests.helpers import BagOfWordsEmbedder

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "structured_vault"


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Checkup, Path, str, str]]:
    root = tmp_path_factory.mktemp("v") / "structured"
    shutil.copytree(FIXTURE, root)
    before = tree_digest(root)
    eng = Engine(AppPaths(tmp_path_factory.mktemp("home")), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(root, name="structured")
    eng.sync()
    eng.embed_vault("structured")
    result = vault_checkup(eng, "structured")
    yield result, root, before, tree_digest(root)
    eng.close()


def test_broken_links_name_the_line(checked: tuple[Checkup, Path, str, str]) -> None:
    broken = {(i.rel_path, i.line, i.detail["target"]) for i in checked[0].of("broken_link")}
    assert ("Notes/Sourdough.md", 7, "Missing recipe") in broken
    assert ("Board.canvas", 0, "Projects/Gone.md") in broken  # a canvas card whose file is missing


def test_orphans_are_notes_with_no_links_either_way(checked: tuple[Checkup, Path, str, str]) -> None:
    orphans = {i.rel_path for i in checked[0].of("orphan")}
    assert "Journal/Ideas.md" in orphans and "Notes/Bread starter.md" in orphans
    assert "Projects/Pricing.md" not in orphans and "Projects/Launch.md" not in orphans  # linked from a property and a note


def test_near_duplicates_by_shared_paragraphs(checked: tuple[Checkup, Path, str, str]) -> None:
    pairs = {(i.rel_path, i.other) for i in checked[0].of("near_duplicate")}
    assert ("Notes/Sourdough copy.md", "Notes/Sourdough.md") in pairs


def test_similar_unlinked_pairs_carry_their_shared_passages(checked: tuple[Checkup, Path, str, str]) -> None:
    similar = checked[0].of("unlinked_similar") + checked[0].of("near_duplicate")
    bread = [i for i in similar if "Notes/Bread starter.md" in (i.rel_path, i.other)]
    assert bread, [(i.rel_path, i.other, i.score) for i in similar]
    passages = next(i.detail["passages"] for i in bread if "passages" in i.detail)
    assert any("flour and water" in p["text"] for p in passages)


def test_mixed_property_types_are_listed_per_note(checked: tuple[Checkup, Path, str, str]) -> None:
    items = {(i.rel_path, i.detail["key"], i.detail["type"]) for i in checked[0].of("inconsistent_property")}
    assert ("Projects/Odd.md", "status", "list") in items


def test_the_vault_is_never_written(checked: tuple[Checkup, Path, str, str]) -> None:
    assert checked[2] == checked[3]
    payload = checkup_json(checked[0])
    assert payload["counts"]["broken_link"] >= 2 and json.dumps(payload)


def test_cli_checkup_json(tmp_path: Path, cairn_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "structured"
    shutil.copytree(FIXTURE, root)
    assert main(["index", "--vault", str(root), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["checkup", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["vault"] == "structured" and "embeddings" in payload["notes"][0]
    assert payload["counts"]["orphan"] >= 2 and payload["counts"]["unlinked_similar"] == 0
