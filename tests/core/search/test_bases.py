"""Obsidian Bases run over a real index: each supported operator, formulas, sorting, and
what is not supported reported by name (tests/fixtures/structured_vault/*.base)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.errors import UsageError
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.manifest import FileRecord
from core.search.base_expr import Evaluator, Row, Unsupported, compile_expression
from core.search.bases import BaseFileError, find_bases, load_base, run_base
from core.structured.bases import base_json, open_base, search_base
from tests.helpers import structured_engine

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "structured_vault"
REPO = Path(__file__).resolve().parents[3]
VAULTS = next((p for d in (REPO.parent, REPO.parent.parent) if (p := d / "shared" / "data" / "vaults").is_dir()), REPO / "missing")
DOCS = VAULTS / "obsidian-tasks-docs"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Path]]:
    eng, root = structured_engine(tmp_path_factory)
    yield eng, root
    eng.close()


def files_of(vault: tuple[Engine, Path]) -> dict[str, FileRecord]:
    return vault[0].index_for("structured").files


def test_a_view_filters_with_and_or_not_and_sorts_by_its_sort(vault: tuple[Engine, Path]) -> None:
    view = run_base(load_base(vault[1] / "Projects.base"), files_of(vault), base="Projects.base")
    assert view.name == "Open work" and view.views == ("Open work", "Everything")
    assert [r.rel_path for r in view.rows] == ["Projects/Launch.md", "Projects/Pricing.md", "Projects/Odd.md"]  # rating DESC, empty last
    assert [dict(r.values)["formula.double"] for r in view.rows] == [10.0, 8.0, None]
    assert view.problems == ()


def test_another_view_keeps_the_global_filters_and_computes_if(vault: tuple[Engine, Path]) -> None:
    view = run_base(load_base(vault[1] / "Projects.base"), files_of(vault), view="Everything")
    assert [(r.rel_path, dict(r.values)["formula.label"]) for r in view.rows] == [
        ("Projects/Launch.md", "good"),
        ("Projects/Odd.md", "meh"),
        ("Projects/Pricing.md", "good"),
        ("Projects/Website.md", "meh"),
    ]


def test_unsupported_statements_are_reported_by_name_and_left_out(vault: tuple[Engine, Path]) -> None:
    view = run_base(load_base(vault[1] / "Unsupported.base"), files_of(vault))
    assert {r.rel_path for r in view.rows} == {"Projects/Pricing.md", "Projects/Launch.md", "Projects/Website.md", "Notes/Sourdough.md"}
    text = "\n".join(view.problems)
    for name in ("file.hasLink()", "date arithmetic", "summaries", "formula.nope"):
        assert name in text


def test_a_malformed_base_is_an_error_with_the_reason(vault: tuple[Engine, Path]) -> None:
    with pytest.raises(BaseFileError, match="not valid YAML"):
        load_base(vault[1] / "Broken.base")
    with pytest.raises(UsageError, match="not valid YAML"):
        open_base(vault[0], str(vault[1] / "Broken.base"))


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('status == "Draft"', True),  # text compares case-insensitively
        ('status != "draft"', False),
        ("rating > 3 && rating <= 4", True),
        ("rating < 4 || rating >= 5", False),
        ("!reviewed", False),
        ("due < date(\"2026-12-01\")", True),
        ("due >= today()", False),
        ('file.name == "Pricing.md" && file.basename == "Pricing" && file.ext == "md"', True),
        ('file.folder == "Projects" && file.inFolder("Projects") && !file.inFolder("Journal")', True),
        ('file.hasTag("work") && file.tags.contains("work")', True),
        ('file.hasProperty("people") && people.contains("Bob")', True),
        ('project == "launch"', True),
        ("file.size > 0 && file.mtime != null", True),
        ("min(rating, 10) * 2 == 8", True),
        ('status.startsWith("dr") && !missing', True),
    ],
)
def test_each_supported_operator(vault: tuple[Engine, Path], expression: str, expected: bool) -> None:
    from core.search.bases import make_row

    row = make_row("Projects/Pricing.md", files_of(vault)["Projects/Pricing.md"])
    assert bool(Evaluator(today=dt.date(2026, 12, 1)).value(compile_expression(expression), row)) is expected


def test_unknown_functions_raise_unsupported_with_their_name() -> None:
    row = Row("a.md", {})
    for expression, name in [("file.hasLink('x')", "file.hasLink()"), ("this.file", "this"), ("link('x')", "link()"), ("a[0]", "Subscript")]:
        with pytest.raises(Unsupported, match=name.replace("(", r"\(").replace(")", r"\)")):
            Evaluator().value(compile_expression(expression), row)


def test_search_within_a_base_only_finds_its_rows(vault: tuple[Engine, Path]) -> None:
    name, view = open_base(vault[0], "structured/Projects.base")
    resp = search_base(vault[0], name, view, "pricing", mode="keyword")
    assert {h.chunk.rel_path for h in resp.hits} == {"Projects/Launch.md", "Projects/Pricing.md", "Projects/Odd.md"}
    assert base_json(name, view)["count"] == 3
    assert find_bases(vault[1]) == ["Broken.base", "Projects.base", "Unsupported.base"]


@pytest.mark.skipif(not DOCS.is_dir(), reason="obsidian-tasks-docs not present")
def test_the_real_base_of_the_tasks_docs(tmp_path: Path) -> None:
    eng = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    eng.add_vault(DOCS, name="docs")
    eng.sync(embed=False)
    name, view = open_base(eng, str(DOCS / "docs pages.base"))
    files = eng.index_for("docs").files
    templates = [p for p in files if p.startswith("_meta/templates/")]
    assert view.problems == () and view.name == "Pages and tags"
    assert len(view.rows) == len(files) - len(templates) and templates
    folders = [r.rel_path.rpartition("/")[0] for r in view.rows]
    assert folders == sorted(folders, key=str.lower)  # groupBy file.folder ASC
    eng.close()
