"""Plain ignore rules (names and `*suffix`) answer as pathspec does, and the scanner uses them without it."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pathspec
import pytest

from core.vault.kinds import KIND_NAMES, kind_patterns
from core.vault.plain_ignores import PlainIgnores
from core.vault.scanner import IgnoreRules, Scanner

REPO = Path(__file__).resolve().parents[3]
PARTS = ("a", "b.png", ".png", "x.PNG", "conversations.json", "my conversations.json", "notes.md", "img.jpg", "c.jpeg", "pngs", "q.webp.md")


@pytest.mark.parametrize(
    "lines",
    [
        list(kind_patterns(KIND_NAMES)),
        list(kind_patterns(("image",))),
        ["*.png", "notes.md", "", "# a comment", "a"],
        ["*s", "*.md"],
    ],
)
def test_plain_rules_match_what_pathspec_matches(lines: list[str]) -> None:
    plain = PlainIgnores.of(lines)
    assert plain is not None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    rng = random.Random(7)
    for _ in range(3000):
        parts = [rng.choice(PARTS) for _ in range(rng.randint(1, 4))]
        rel = "/".join(parts)
        for is_dir in (False, True):
            assert plain.ignores(parts) == spec.match_file(rel + "/" if is_dir else rel), (lines, rel, is_dir)


@pytest.mark.parametrize("line", ["docs/", "/top.md", "!keep.png", "*.p?g", "[ab].md", "**/x", "a\\#b", "name with space", "*"])
def test_any_other_line_is_left_to_pathspec(line: str) -> None:
    assert PlainIgnores.of(["*.png", line]) is None


def test_a_vault_with_gitignore_rules_still_gets_them(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("drafts/\n*.tmp.md\n!keep.tmp.md\n", encoding="utf-8")
    rules = IgnoreRules(tmp_path, kind_patterns(("image",)))
    assert rules.ignores("drafts/x.md") and rules.ignores("a.tmp.md") and not rules.ignores("keep.tmp.md")
    assert rules.ignores("pics/a.png") and not rules.ignores("a.md")


def test_a_vault_without_ignore_files_is_scanned_without_pathspec(tmp_path: Path) -> None:
    """What a cold `cairn index` of most vaults pays no longer: pathspec's ~15 ms of imports (issue #30)."""
    vault = tmp_path / "v"
    (vault / "pics.png").mkdir(parents=True)
    (vault / "pics.png" / "in.md").write_text("# in a folder the rules leave out\n", encoding="utf-8")
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    (vault / "b.png").write_bytes(b"\x89PNG")
    code = (
        "import sys; from pathlib import Path; from core.vault.scanner import Scanner\n"
        "found = [e.rel_path for e in Scanner(Path(sys.argv[1])).scan().entries]\n"
        "print(found, 'pathspec' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(vault)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "['a.md'] False", done.stderr
    assert [e.rel_path for e in Scanner(vault).scan().entries] == ["a.md"]
