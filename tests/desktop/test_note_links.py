"""The pure parts of links in the app: rewriting for the Preview, places in a note, editor commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.index.manifest import ChunkRecord
from desktop.note_links import (
    Excerpt,
    anchor_range,
    byte_of_line,
    editor_argv,
    line_of,
    note_url,
    parse_note_url,
    preview_markdown,
)

RAW = b"# Note\n\nIntro.\n\n## Steps\n\nCook it. ^cook\n"
CHUNKS = (ChunkRecord(0, "h0", 0, 15, "Note"), ChunkRecord(1, "h1", 16, len(RAW), "Note > Steps"))


def test_note_urls_round_trip_names_with_spaces_and_anchors() -> None:
    url = note_url("My Notes/Plan B", "Part 2")
    assert url == "cairn-note:My%20Notes/Plan%20B#Part%202"
    assert parse_note_url(url) == ("My Notes/Plan B", "Part 2")
    assert parse_note_url("https://x.org") is None


def test_preview_markdown_links_embeds_and_images(tmp_path: Path) -> None:
    image = tmp_path / "a b.png"
    out = preview_markdown(
        "See [[Plan|the plan]].\n\n![[Plan]]\n\n![[a b.png]] and ![[gone.pdf]]\n\n`[[code]]`\n",
        excerpt=lambda target, anchor: Excerpt("Plan", "First line of the plan."),
        attachment=lambda target: image if target == "a b.png" else None,
    )
    assert "[the plan](cairn-note:Plan)" in out
    assert "> **[↪ Plan](cairn-note:Plan)** — First line of the plan." in out
    assert f"![a b.png](<{image.as_uri()}>)" in out
    assert "📎 gone.pdf (missing)" in out
    assert "`[[code]]`" in out


def test_icons_are_dropped_and_a_missing_image_is_named_once(tmp_path: Path) -> None:
    out = preview_markdown(
        "Tap ![[lucide-send.svg#icon]] to send, then ![[lucide-x.svg]] to close.\n\n![[gone.png]] and again ![[gone.png]]\n",
        excerpt=lambda target, anchor: None,
        attachment=lambda target: None,
    )
    assert "lucide" not in out and "Tap  to send, then  to close." in out
    assert out.count("gone.png") == 1 and "🖼 gone.png (missing)" in out


def test_anchors_find_the_chunk_of_a_heading_or_a_block() -> None:
    assert anchor_range(CHUNKS, RAW, "steps") == (16, len(RAW))
    assert anchor_range(CHUNKS, RAW, "^cook") == (16, len(RAW))
    assert anchor_range(CHUNKS, RAW, "Nowhere") is None
    assert line_of(RAW, byte_of_line(RAW, 5)) == 5


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("code --goto {path}:{line}", ["code", "--goto", "/v/My Note.md:12"]),
        ("gvim +{line} {path}", ["gvim", "+12", "/v/My Note.md"]),
        ('"/Applications/Sublime Text.app/subl" {path}:{line}', ["/Applications/Sublime Text.app/subl", "/v/My Note.md:12"]),
    ],
)
def test_editor_commands_fill_path_and_line_without_a_shell(template: str, expected: list[str]) -> None:
    assert editor_argv(template, Path("/v/My Note.md"), 12) == expected


def test_an_empty_or_broken_editor_command_is_an_error() -> None:
    with pytest.raises(ValueError):
        editor_argv("  ", Path("x.md"), 1)
    with pytest.raises(ValueError):
        editor_argv('code "unclosed', Path("x.md"), 1)
