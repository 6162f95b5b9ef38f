"""Links made straight from the wikilinks of plain texts are exactly those markdown-it's tokens give."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from core.base.models import Link
from core.vault.chunker import ChunkLimits, chunk_markdown, new_parser
from core.vault.frontmatter import parse_front_matter
from core.vault.links import _may_link, extract_links

VAULTS = next((p / "shared/data/vaults" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults").is_dir()), Path("/nonexistent"))


def _both(text: str) -> tuple[tuple[Link, ...], tuple[Link, ...]] | None:
    """(links from the scanner's inline texts, links from a whole markdown-it parse), or None if the scanner declined."""
    body = chunk_markdown(text.encode("utf-8"), 0, ChunkLimits(), new_parser())
    if body.inline is None:
        return None
    return extract_links(text, inline=body.inline, references=body.references), extract_links(text)


def test_links_on_one_line_share_its_context_and_keep_their_order() -> None:
    text = "# T\n\nSee [[a]] and ![[b.png]] then [[c#H|lab]].\nNext [[d]] line.\n\n- item [[e|E]]\n"
    both = _both(text)
    assert both is not None and both[0] == both[1]
    links = both[0]
    assert [(link.target, link.line, link.context) for link in links][:2] == [
        ("a", 3, "See [[a]] and ![[b.png]] then [[c#H|lab]]."),
        ("b.png", 3, "See [[a]] and ![[b.png]] then [[c#H|lab]]."),
    ]
    assert [(link.label, link.line) for link in links][2:] == [("lab", 3), ("d", 4), ("E", 6)]


@pytest.mark.skipif(not VAULTS.is_dir(), reason="needs the shared real vaults")
def test_every_real_note_gives_the_same_links_as_a_whole_parse() -> None:
    compared = linked = 0
    for path in sorted(VAULTS.rglob("*.md")):
        raw = path.read_bytes()
        text = raw[parse_front_matter(raw).end_byte :].decode("utf-8", "replace")
        if ("[[" not in text and "](" not in text) or text.count("[") > 20_000:
            continue
        both = _both(text)
        if both is not None:
            assert both[0] == both[1], path
            compared += 1
            linked += bool(both[0])
    assert compared > 50 and linked > 50


def test_may_link_finds_what_the_expression_it_replaces_found() -> None:
    expression = re.compile(r"\[\[|\]\((?!\s*<?[A-Za-z][A-Za-z0-9+.\-]*:)")
    rng = random.Random(3)
    parts = ["[[", "](", "]", "(", "[", " ", "\n", "<", "http", "s:", "x.md", ":", "9", "a+b:", "](<", "](\n"]
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 8)))
        assert _may_link(text) == (expression.search(text) is not None), repr(text)
