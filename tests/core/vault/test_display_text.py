"""A chunk's display text reads as Obsidian shows the note: no markdown or HTML syntax outside code."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.vault.display_text import display_text, heading_text, one_line, unmarked
from core.vault.notes import parse_note
from tests.render_leaks import count_leaks, leaks

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "fixtures" / "obsidian_constructs"
VAULTS = next((p / "shared/data/vaults" for p in REPO.parents if (p / "shared/data/vaults").is_dir()), Path("/nonexistent"))
#: Places where a note writes the syntax as literal text on purpose (escaped, or not a link to
#: Obsidian either): shown as written, as Obsidian shows them.
LITERAL_IN_SOURCE = {
    ("obsidian-tasks-docs", "How To/Style custom statuses.md"),  # "`[[…|` and `]`" then "[…]]": a stray "]]"
    ("obsidian-tasks-demo", "Test Data/internal_heading_links.md"),  # `\[\[#Escaped Links]]`
    ("obsidian-tasks-demo", "Test Data/link_in_task_wikilink.md"),  # "[[]]", which Obsidian does not parse
}


def chunks_of(root: Path, vault: str) -> list[tuple[str, str]]:
    out = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        raw = path.read_bytes()
        note = parse_note(vault, rel, raw, size=len(raw), mtime_ns=0)
        out.extend((rel, c.text) for c in note.chunks)
    return out


def headings_of(root: Path, vault: str) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.md")):
        raw = path.read_bytes()
        out.extend(c.heading_path for c in parse_note(vault, path.relative_to(root).as_posix(), raw, size=len(raw), mtime_ns=0).chunks)
    return out


def test_heading_paths_read_without_syntax() -> None:
    assert heading_text("Global Query > Examples > [[Layout]]") == "Global Query > Examples > Layout"
    assert heading_text("Notes - _italic_ > With %% a comment %% > ==marked==") == "Notes - italic > With > marked"
    assert heading_text("Plain > Path") == "Plain > Path"


def test_the_construct_corpus_shows_no_syntax_in_any_chunk() -> None:
    found = {rel: leaks(display_text(text)) for rel, text in chunks_of(CORPUS, "corpus")}
    assert {rel: kinds for rel, kinds in found.items() if kinds} == {}
    assert len(found) >= 1


def test_callouts_read_as_kind_title_and_text() -> None:
    text = display_text("> [!tip]+ Keep it short\n> A tip with **bold** text.\n>\n> > [!question] Inner\n> > Nested.")
    assert text.splitlines() == ["Tip: Keep it short — A tip with bold text.", "Question: Inner — Nested."]
    assert display_text("> [!note]\n> Untitled body.") == "Note: Untitled body."
    assert display_text("> [!todo] Only a title") == "To do: Only a title"
    assert display_text("> [!tip] Tip\n> Said once.") == "Tip: Said once."
    assert display_text("> [!released]\n> Since 1.2.") == "Released: Since 1.2."


def test_tables_read_as_rows_of_cells_with_escaped_pipes_in_links() -> None:
    table = "| Syntax | Meaning |\n|---|---|\n| `- [x]` | [[Task formats#Task lists\\|Completed task]] |"
    assert display_text(table).splitlines() == ["Syntax · Meaning", "`- [x]` · Completed task"]
    # a row without its header (a quote, or a chunk cut inside a table) reads the same way
    assert display_text("| `- [x]` | [[Task formats#Task lists\\|Completed task]] |") == "`- [x]` · Completed task"
    assert display_text("|---|---|\n| a | b |") == "a · b"


def test_embeds_name_their_note_and_images_and_icons_are_left_out() -> None:
    assert one_line("![[Other note#Some heading]]") == "↪ Other note › Some heading"
    assert one_line("Send ![[lucide-send.svg#icon]] it") == "Send it"
    assert one_line("![[Manual.pdf#page=3]]") == "📎 Manual.pdf, page 3"


def test_hidden_things_stay_hidden_and_html_is_text() -> None:
    assert one_line("Text ^abc-123") == "Text"
    assert one_line("A %%hidden%% word %%\nand more\n%%") == "A word"
    assert one_line('<span class="icon-app"></span>Tap &amp; hold <b>here</b><script>alert(1)</script>') == "Tap & hold here"
    assert one_line("==marked== and #tag and $x^2$") == "marked and #tag and $x^2$"


def test_tasks_footnotes_and_code() -> None:
    assert display_text("- [ ] open\n- [x] done").splitlines() == ["☐ open", "☑ done"]
    assert display_text("A claim[^1].\n\n[^1]: Its source.").splitlines() == ["A claim[1].", "[1] Its source."]
    assert display_text("```md\n> [!tip] code\n[[x]]\n```") == "`> [!tip] code\n[[x]]`"
    assert one_line("Run ``a ` b`` now") == "Run ``a ` b`` now"


def test_a_chunk_cut_inside_a_code_block_keeps_its_code_as_code() -> None:
    text = "    <span>^dcf64c</span>\n  </div>\n```\n\nAfter the code."
    assert leaks(display_text(text)) == []
    assert display_text(text).endswith("After the code.")
    cut_at_end = "```\nType   Name | reqs\n--------|------"  # the chunk ends before the code does
    assert display_text(cut_at_end) == "`Type   Name | reqs\n--------|------`"


@pytest.mark.parametrize("vault", ["obsidian-tasks-docs", "obsidian-tasks-demo"])
def test_real_obsidian_vaults_show_no_syntax(vault: str) -> None:
    root = VAULTS / vault
    if not root.is_dir():
        pytest.skip(f"{vault} is not here")
    chunks = [(rel, text) for rel, text in chunks_of(root, vault) if (vault, rel) not in LITERAL_IN_SOURCE]
    assert len(chunks) > 500
    shown = [(rel, display_text(text)) for rel, text in chunks]
    assert count_leaks(text for _, text in shown) == {}, {rel: leaks(text) for rel, text in shown if leaks(text)}
    headings = {heading_text(path) for path in headings_of(root, vault)}
    assert count_leaks(headings) == {}, [h for h in headings if leaks(h)]


def test_code_marks_come_off_for_plain_views() -> None:
    assert unmarked("Use `hide postpone button` or ``a ` b`` here") == "Use hide postpone button or a ` b here"


def test_a_related_pages_line_reads_as_its_tags() -> None:
    """The `<span class="related-pages">` line under a title, as obsidian-tasks-docs' index pages write it."""
    corpus = (CORPUS / "Constructs.md").read_text(encoding="utf-8")
    line = next(ln for ln in corpus.splitlines() if ln.startswith('<span class="related-pages">'))
    assert one_line(f"# About How Tos\n\n{line}\n\nThese guides.") == "About How Tos #index-pages #feature/scripting These guides."
    assert one_line(line) == "#index-pages #feature/scripting"
