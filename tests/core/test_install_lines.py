"""Every `pip install` of Cairn names this distribution: `cairn` on the package index is another project."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# `pip install 'name[extra]'`, `pip install name`, `pipx install name`: the first word after install.
INSTALL = re.compile(r"""\b(?:pip|pipx|uv pip)\s+install\s+(?:-[-\w]+\s+)*['"]?([A-Za-z0-9_.\-]+)(\[[\w,\-]+\])?""")


def texts() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    files += sorted(p for p in (REPO / "core").rglob("*.py"))
    files += sorted(p for p in (REPO / "desktop").rglob("*.py"))
    return [p for p in files if p.is_file()]


def test_install_lines_name_the_distribution_in_pyproject() -> None:
    dist = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["name"]
    assert dist == "cairn-notes"
    wrong = []
    for path in texts():
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in INSTALL.finditer(line):
                name = m.group(1)
                if name.lower() == "cairn":
                    wrong.append(f"{path.relative_to(REPO)}:{line_no}: {line.strip()}")
    assert wrong == [], "install lines naming the unrelated `cairn` package:\n" + "\n".join(wrong)


def test_extras_named_in_install_lines_exist() -> None:
    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for path in texts():
        for m in INSTALL.finditer(path.read_text(encoding="utf-8")):
            if m.group(1) in ("cairn-notes", ".") and m.group(2):
                assert set(m.group(2).strip("[]").split(",")) <= extras, (path, m.group(0))
