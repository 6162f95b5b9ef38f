"""Wikilinks read without the inline parser are exactly those the parser reads, or left to it."""

from __future__ import annotations

import pytest

from core.vault.links import new_link_parser
from core.vault.wikilinks_plain import plain_wikilinks


def _by_parser(text: str) -> list[tuple[bool, str, int]]:
    tokens = new_link_parser().parseInline(text)
    return [(bool(c.meta["embed"]), c.content, int(c.meta["pos"])) for t in tokens for c in t.children or [] if c.type == "wikilink"]


@pytest.mark.parametrize(
    "text",
    [
        "plain text, no links",
        "See [[Note]] and [[Other#Heading|label]].",
        "![[image.png]] then ![[Note#^block]] and [[a]]! [[b]]",
        "*[[a_b]]* _emphasis_ **[[c]]**",
        "two lines [[x]]\nand [[y]] here",
        "[[a]b]] odd but a link",
    ],
)
def test_plain_texts_are_read_as_the_parser_reads_them(text: str) -> None:
    found = plain_wikilinks(text)
    assert found is not None
    assert found == _by_parser(text)


@pytest.mark.parametrize(
    "text",
    [
        "[[a]] [b](c.md)",  # a markdown link
        "[[x]] `[[code]]`",  # a code span
        "\\[[escaped]]",
        "<b>[[h]]</b>",
        "[[]]",
        "[[one [[two]]",
        "[[a]]]",
        "[[split\nline]]",
        "![alt](pic.png) [[n]]",
    ],
)
def test_anything_else_is_left_to_the_parser(text: str) -> None:
    assert plain_wikilinks(text) is None
