"""Pure helpers behind the panels: snippet highlighting, links, note preparation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.base.models import ChunkRef, Hit
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from desktop.actions import obsidian_url, wikilink
from desktop.formatting import heading_trail, snippet_html
from desktop.note_text import END, START, prepare

REPO = Path(__file__).resolve().parents[2]
VAULTS = next((p / "shared/data/vaults" for p in REPO.parents if (p / "shared/data/vaults").is_dir()), Path("/nonexistent"))


def _hit(rel: str, heading: str) -> Hit:
    return Hit(ChunkRef("v", rel, 1, heading), 0.1, "Title", "", 0, 1, None, None, ())


def test_snippet_marks_become_bold_and_everything_else_is_escaped() -> None:
    assert snippet_html("a **rest** <script>&") == "a <b>rest</b> &lt;script&gt;&amp;"


def test_snippet_unpaired_mark_stays_literal_and_heading_hashes_go() -> None:
    assert snippet_html("### Bake **open") == "Bake **open"


def test_heading_trail_drops_the_title_already_shown() -> None:
    assert heading_trail("Sourdough loaf > Method > Autolyse", "Sourdough loaf") == "Method › Autolyse"
    assert heading_trail("Sourdough loaf", "Sourdough loaf") == ""


def test_obsidian_url_names_the_vault_folder_and_drops_md() -> None:
    url = obsidian_url("/notes/My Vault", "Recipes/Sourdough loaf.md")
    assert url == "obsidian://open?vault=My%20Vault&file=Recipes%2FSourdough%20loaf"


def test_wikilink_points_at_the_chunk_heading() -> None:
    assert wikilink(_hit("Recipes/Sourdough loaf.md", "Sourdough loaf > Method > Autolyse")) == "[[Sourdough loaf#Autolyse]]"
    assert wikilink(_hit("Recipes/Sourdough loaf.md", "Sourdough loaf")) == "[[Sourdough loaf]]"


def test_prepare_marks_chunk_after_heading_prefix_and_reads_properties() -> None:
    raw = b"---\ntitle: T\ntags: [a, b]\n---\n# T\n\nintro\n\n## Part\n\nbody\n\n## Next\n\nmore\n"
    start = raw.index(b"## Part")
    end = raw.index(b"## Next")
    note = prepare(raw, start, end)
    assert note.marked
    assert note.properties == [("title", "T"), ("tags", "a, b")]
    assert f"## {START} Part" in note.markdown
    assert f"## {END} Next" in note.markdown
    assert "title: T" not in note.markdown


def test_prepare_reports_bad_yaml_without_failing() -> None:
    raw = b"---\ntitle: [oops\n---\nbody\n"
    note = prepare(raw, raw.index(b"body"), len(raw))
    assert note.properties_error and "YAML" in note.properties_error
    assert note.markdown.startswith(START)



def test_snippet_code_spans_show_as_code_with_their_matches_marked() -> None:
    html_text = snippet_html("Use `hide **postpone** button` or ``a ` b`` <here>")
    assert html_text == "Use <code>hide <b>postpone</b> button</code> or <code>a ` b</code> &lt;here&gt;"


def test_heading_trails_read_without_link_or_emphasis_syntax() -> None:
    assert heading_trail("Note > Find old `tag` and ==marks== > [[A|the a]]", "Note") == "Find old tag and marks › the a"


def test_related_pages_spans_of_real_notes_never_reach_a_result_row(tmp_path: Path) -> None:
    """obsidian-tasks-docs writes `<span class="related-pages">#tag</span>` under its How To titles:
    the result rows and their "n more passages" rows (snippet_html of `Hit.snippet`, `Hit.more`) show the tags only."""
    source = VAULTS / "obsidian-tasks-docs"
    if not (source / "How To").is_dir():
        pytest.skip("obsidian-tasks-docs is not here")
    vault = tmp_path / "docs"
    shutil.copytree(source / "How To", vault / "How To")
    shutil.copy2(source / "Scripting" / "About Scripting.md", vault / "About Scripting.md")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    try:
        engine.add_vault(vault, name="docs")
        engine.sync(embed=False)
        rows = {}
        for query in ("index pages", "css", "tasks in current file", "dataview scripting", "about"):
            for hit in engine.search(SearchRequest(query, mode="keyword", k=20, grouped=True)).hits:
                rows.update({(h.chunk.rel_path, h.chunk.ordinal): snippet_html(h.snippet) for h in (hit, *hit.more)})
    finally:
        engine.close()
    assert ("How To/About How Tos.md", 0) in rows and ("How To/How to get tasks in current file.md", 0) in rows
    assert [row for row in rows.values() if "span" in row or "related-pages" in row or "&lt;" in row] == []
    assert "#index-pages" in rows["How To/About How Tos.md", 0]
