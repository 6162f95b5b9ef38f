"""Links read from markdown with markdown-it (never inside code) and resolved the way Obsidian does."""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path

import pytest

from core.base.models import Link, LinkKind
from core.vault.link_resolver import NoteName, Resolver
from core.vault.links import extract_links, labelled_text, new_link_parser, split_wikilink
from core.vault.notes import parse_note

REPO = Path(__file__).resolve().parents[3]
LINK_VAULT = REPO / "tests" / "fixtures" / "link_vault"
SHARED = Path("/work/shared/data/vaults")


def home_links() -> tuple[Link, ...]:
    raw = (LINK_VAULT / "Home.md").read_bytes()
    return parse_note("v", "Home.md", raw, size=len(raw), mtime_ns=0).links


def test_every_link_form_is_read_with_its_file_line_label_and_anchor() -> None:
    links = {(lk.kind, lk.target, lk.anchor): lk for lk in home_links()}
    wiki, embed, md = LinkKind.WIKI, LinkKind.EMBED, LinkKind.MARKDOWN
    assert links[(wiki, "Plan", "")].label == "the plan"
    assert links[(wiki, "Projects/Plan", "")].line == 7  # a line of the file: front matter counted
    assert links[(wiki, "Recipes", "Soup")].label == "Recipes > Soup"
    assert (wiki, "Recipes", "^stock") in links
    assert (md, "Projects/My Notes.md", "Goals") in links  # URL-decoded, anchor split off
    assert links[(md, "Projects/Plan.md", "")].label == "the plan"
    assert (embed, "Recipes", "") in links and (embed, "cat.png", "") in links
    assert (wiki, "Missing note", "") in links  # kept, although nothing answers it
    assert links[(wiki, "Plan", "")].context == "Start with [[Projects/Plan]] and [[Plan|the plan]]."


def test_links_in_code_spans_fences_and_indented_code_never_count() -> None:
    targets = {lk.target for lk in home_links()}
    assert not targets & {"Not a link", "Nope.md", "Fenced link", "Fenced.md", "Indented code link"}
    assert len(home_links()) == 13


def test_web_links_and_links_to_other_files_are_not_note_links() -> None:
    text = "[site](https://obsidian.md) [mail](mailto:a@b.c) [o](obsidian://open?vault=x) [py](tool.py) [self](#Top) [n](Note.md)"
    assert [lk.target for lk in extract_links(text)] == ["Note.md"]


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("Note", ("Note", "", "Note")),
        ("Note|shown", ("Note", "", "shown")),
        ("Note#Part|shown", ("Note", "Part", "shown")),
        ("Note#^blk", ("Note", "^blk", "Note > ^blk")),
        ("#Local", ("", "Local", "Local")),
    ],
)
def test_wikilink_parts(inner: str, expected: tuple[str, str, str]) -> None:
    assert split_wikilink(inner) == expected


def test_a_wikilink_does_not_span_lines_or_nest_brackets() -> None:
    assert extract_links("[[half\nlink]] and [[a [b] c]]") == ()


def resolver() -> Resolver:
    names = [
        NoteName("Home.md"),
        NoteName("Projects/Plan.md"),
        NoteName("Archive/Plan.md"),
        NoteName("Deep/er/Plan.md"),
        NoteName("Projects/My Notes.md", ("MN", "Notebook")),
        NoteName("Recipes.md"),
        NoteName("dendron.sub.topic.md"),
        NoteName(unicodedata.normalize("NFC", "café.md")),
    ]
    return Resolver(names)


def wiki(target: str) -> Link:
    return Link(LinkKind.WIKI, target)


def test_same_name_in_two_folders_goes_to_the_linking_notes_folder_else_the_shortest_path() -> None:
    r = resolver()
    assert r.resolve(wiki("Plan"), "Archive/Other.md") == "Archive/Plan.md"
    assert r.resolve(wiki("Plan"), "Projects/Other.md") == "Projects/Plan.md"
    assert r.resolve(wiki("Plan"), "Deep/er/Other.md") == "Deep/er/Plan.md"
    assert r.resolve(wiki("Plan"), "Home.md") in {"Archive/Plan.md", "Projects/Plan.md"}  # never the deeper one


def test_names_match_case_insensitively_unicode_normalised_by_alias_and_by_path_suffix() -> None:
    r = resolver()
    assert r.resolve(wiki("RECIPES"), "Home.md") == "Recipes.md"
    assert r.resolve(wiki(unicodedata.normalize("NFD", "Café")), "Home.md") == "café.md"
    assert r.resolve(wiki("notebook"), "Home.md") == "Projects/My Notes.md"
    assert r.resolve(wiki("er/Plan"), "Home.md") == "Deep/er/Plan.md"
    assert r.resolve(wiki("Projects/Plan.md"), "Home.md") == "Projects/Plan.md"
    assert r.resolve(wiki("dendron.sub.topic"), "Home.md") == "dendron.sub.topic.md"
    assert r.resolve(wiki("dendron.sub"), "Home.md") is None
    assert r.resolve(wiki("Missing"), "Home.md") is None


def test_markdown_links_resolve_relative_to_the_note_then_from_the_vault_root() -> None:
    r = resolver()
    assert r.resolve(Link(LinkKind.MARKDOWN, "../Home.md"), "Projects/Plan.md") == "Home.md"
    assert r.resolve(Link(LinkKind.MARKDOWN, "Plan.md"), "Archive/x.md") == "Archive/Plan.md"
    assert r.resolve(Link(LinkKind.MARKDOWN, "/Projects/Plan.md"), "Archive/x.md") == "Projects/Plan.md"
    assert r.resolve(Link(LinkKind.WIKI, "", "Heading"), "Home.md") == "Home.md"


def test_labelled_text_shows_labels_and_leaves_code_alone() -> None:
    assert labelled_text("see [[a|b]], [[c#d]] and [t](x.md) or ![[img.png]]") == "see b, c > d and t or img.png"
    assert labelled_text("keep `[[code]]` and\n```\n[x](y.md)\n```\nbut [[z]]") == "keep `[[code]]` and\n```\n[x](y.md)\n```\nbut z"
    assert labelled_text("no links [here]") == "no links [here]"


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared vaults not present")
@pytest.mark.parametrize(("vault", "raw_brackets"), [("simonw-til", 54), ("tldr", 40)])
def test_real_vaults_code_full_of_double_brackets_gives_no_wikilinks(vault: str, raw_brackets: int) -> None:
    """simonw-til has `[[1, 2]]` in Python and JSON, tldr has bash `[[ -f x ]]`: all code, no links."""
    parser = new_link_parser()
    texts = [p.read_text("utf-8", "replace") for p in (SHARED / vault).rglob("*.md")]
    assert sum(t.count("[[") for t in texts) >= raw_brackets
    links = [lk for t in texts for lk in extract_links(t, parser=parser)]
    assert not [lk for lk in links if lk.kind is not LinkKind.MARKDOWN]
    assert all("`" not in lk.target for lk in links)


@pytest.mark.parametrize("tail", ["", "]]", "\n\nThen [[Real note]] at the end.\n"])
def test_unclosed_brackets_are_read_in_linear_time(tail: str) -> None:
    """200,000 unclosed "[[" (400 KB) took 188 s to index: each looked for "]]" to the end of the text."""
    raw = ("Before [[First]] them.\n\n" + "[[" * 200_000 + tail).encode()
    started = time.process_time()  # CPU time: what a quadratic scan costs, whatever else the machine runs
    doc = parse_note("v", "brackets.md", raw, size=len(raw), mtime_ns=0)
    elapsed = time.process_time() - started
    assert elapsed < 12, f"{elapsed:.1f} CPU-s"  # ~1 s here; minutes when it was quadratic
    assert [lk.target for lk in doc.links][:1] == ["First"]  # links before the flood are read
    assert [w.code for w in doc.warnings] == ["too_many_brackets"]


def test_links_are_read_up_to_the_bracket_cap_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    import core.vault.links as links_module

    monkeypatch.setattr(links_module, "MAX_LINK_BRACKETS", 8)
    text = "[[a]] [[b]] [[c]] [[d]] [[e]]\n"
    assert [lk.target for lk in extract_links(text)] == ["a", "b", "c", "d"]  # the 9th "[" and on: not read
    doc = parse_note("v", "n.md", text.encode(), size=len(text), mtime_ns=0)  # the scanner's inline texts
    assert [lk.target for lk in doc.links] == ["a", "b", "c", "d"]
    assert [w.code for w in doc.warnings] == ["too_many_brackets"]


def test_a_pipe_escaped_inside_a_table_cell_still_splits_target_and_label() -> None:
    assert split_wikilink("Task formats#Task lists\\|Completed task") == ("Task formats", "Task lists", "Completed task")
