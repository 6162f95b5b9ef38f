"""The synthetic vault generator is deterministic and writes well-formed notes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from synth_vault import generate_vault, main  # noqa: E402


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    data = yaml.safe_load(head)
    assert isinstance(data, dict)
    return data, body


def test_same_seed_gives_byte_identical_vault(tmp_path: Path) -> None:
    first = generate_vault(tmp_path / "a", 60, seed=11)
    second = generate_vault(tmp_path / "b", 60, seed=11)
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert first.total_bytes == second.total_bytes


def test_different_seed_gives_different_vault(tmp_path: Path) -> None:
    generate_vault(tmp_path / "a", 20, seed=1)
    generate_vault(tmp_path / "b", 20, seed=2)
    assert snapshot(tmp_path / "a") != snapshot(tmp_path / "b")


def test_writes_requested_notes_two_folders_deep(tmp_path: Path) -> None:
    stats = generate_vault(tmp_path / "v", 80)
    notes = snapshot(tmp_path / "v")
    assert len(notes) == stats.n_notes == 80
    assert all(path.count("/") == 2 for path in notes)
    assert stats.total_bytes == sum(len(b) for b in notes.values())
    assert stats.vocab_size == 20_000
    assert 40 <= stats.n_folders <= 60


def test_front_matter_parses_and_has_expected_fields(tmp_path: Path) -> None:
    generate_vault(tmp_path / "v", 50)
    for rel_path, raw in snapshot(tmp_path / "v").items():
        meta, body = split_front_matter(raw.decode("utf-8"))
        assert set(meta) == {"title", "tags", "date", "doc_type"}, rel_path
        assert isinstance(meta["title"], str) and meta["title"]
        assert isinstance(meta["tags"], list) and all(isinstance(t, str) for t in meta["tags"])
        assert 2023 <= meta["date"].year <= 2026  # type: ignore[attr-defined]
        assert isinstance(meta["doc_type"], str)
        assert body.strip()


def test_notes_have_headings_and_balanced_code_fences(tmp_path: Path) -> None:
    generate_vault(tmp_path / "v", 200)
    texts = [raw.decode("utf-8") for raw in snapshot(tmp_path / "v").values()]
    assert any("\n## " in t for t in texts)
    assert any("\n```" in t for t in texts)
    assert any("\n- " in t for t in texts)
    for text in texts:
        assert text.count("```") % 2 == 0
        assert text.endswith("\n")


def test_refuses_non_empty_output_folder(tmp_path: Path) -> None:
    (tmp_path / "keep.md").write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="not empty"):
        generate_vault(tmp_path, 5)
    assert main([str(tmp_path), "--notes", "5"]) == 2


def test_cli_writes_vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "cli"), "--notes", "12", "--seed", "3"]) == 0
    assert len(snapshot(tmp_path / "cli")) == 12
    assert "wrote 12 notes" in capsys.readouterr().out


def test_obsidian_shape_writes_what_obsidian_notes_hold(tmp_path: Path) -> None:
    from core.vault.frontmatter import parse_front_matter
    from core.vault.simple_blocks import simple_blocks

    generate_vault(tmp_path / "a", 80, seed=3, shape="obsidian")
    generate_vault(tmp_path / "b", 80, seed=3, shape="obsidian")
    notes = snapshot(tmp_path / "a")
    assert notes == snapshot(tmp_path / "b")
    text = "\n".join(raw.decode("utf-8") for raw in notes.values())
    constructs = ("> [!", "[[", "|---", "- [ ] ", "📅 ", "![[", "status: ", "rating: ", 'project: "[[', "[^1]: ", "\n:", "> |", "\n   ```sh")
    for construct in constructs:
        assert construct in text, construct
    assert re.search(r"[^\n]\n> \[!", text)  # a callout right under its paragraph
    bodies = [raw[parse_front_matter(raw).end_byte :].decode("utf-8") for raw in notes.values()]
    taken = sum(simple_blocks(body) is not None for body in bodies)
    assert taken >= 0.95 * len(bodies)  # the plain-note scanner reads Obsidian's shapes


def test_unknown_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown shape"):
        generate_vault(tmp_path / "a", 1, shape="dendron")
