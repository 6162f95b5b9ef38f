"""Wikilinks read without the inline parser are exactly those the parser reads, or left to it."""

from __future__ import annotations

import random

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
        "[!info]- Callout title\nBody with [[x]] #t",  # bracket pairs no link rule takes without definitions
        "Text.[^1] and [[y]], [plain] and ![alt] text, [] [ ]",
        "[a] [[b]] [c] [[d|e]]",
        "[x]: [[w]] (inline, a colon is text)",
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
        "[x][[w]]",  # a full reference's label
        "[a [[w]] b]",
        "[x][y] [[w]]",
    ],
)
def test_anything_else_is_left_to_the_parser(text: str) -> None:
    assert plain_wikilinks(text) is None


def test_with_reference_definitions_any_bracket_pair_is_left_to_the_parser() -> None:
    assert plain_wikilinks("[!info] [[x]]", references=True) is None
    assert plain_wikilinks("[[x]] and [[y]]", references=True) == [(False, "x", 0), (False, "y", 10)]


def test_generated_texts_agree_with_the_parser() -> None:
    rng = random.Random(5)
    parts = ["[[a]]", "![[b.png]]", "[[c|d]]", "[!note]", "[^1]", "[x]", "[]", "[x](y.md)", "[x][y]", "]", "[", "text", " ", "\n", "!", "*e*", "(p)", ":"]
    taken = 0
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 8)))
        found = plain_wikilinks(text)
        if found is not None:
            taken += 1
            assert found == _by_parser(text), repr(text)
    assert taken > 1000
