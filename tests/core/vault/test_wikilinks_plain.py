"""Links read without the inline parser are exactly those the parser reads, or left to it."""

from __future__ import annotations

import random

import pytest

from core.vault.links import new_link_parser
from core.vault.wikilinks_plain import PlainLink, plain_links

_MD = new_link_parser()


def _by_parser(text: str, references: str = "") -> list[tuple[object, ...]]:
    """The link tokens markdown-it makes of `text`: wikilinks with where they start, links with their
    label's text and href, images with their label and src (in `plain_links`' terms)."""
    env: dict[str, object] = {}
    if references:
        _MD.parse(references, env)
    children = [c for t in _MD.parseInline(text, env) for c in t.children or []]
    out: list[tuple[object, ...]] = []
    for i, c in enumerate(children):
        if c.type == "wikilink":
            out.append(("wiki", bool(c.meta["embed"]), c.content, int(c.meta["pos"])))
        elif c.type == "image":
            out.append(("image", c.content, c.attrs["src"]))
        elif c.type == "link_open":
            label = ""
            for d in children[i + 1 :]:
                if d.type == "link_close":
                    break
                label += d.content
            out.append(("link", label, c.attrs["href"]))
    return out


def _plain(found: list[PlainLink]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for link in found:
        if link.destination is None:
            out.append(("wiki", link.embed, link.inner, link.pos))
        else:
            out.append(("image" if link.embed else "link", link.inner, link.destination))
    return out


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
        "[[a]] [b](c.md)",
        "![alt](pic.png) [[n]]",
        "[Getting Started](ch01-00-getting-started.md)",
        "see [the book](https://doc.rust-lang.org/book/) and [ch](ch03-02-data-types.html#the-tuple-type)",
        "[ spaced label ](Test%20Data/x.md#h) [e]() !![i](a.png)",
        "[a!b $c~d](x.md?q=1) text & more",
        "[[w]](x.md) then [l](y.md)\n[m](z.md)",
        "[x]\n(y.md)",  # no link: nothing may come between "]" and "("
        "[[x]] `[[code]]`",  # a code span's inside is code
        "[ ] #task with `[[#Links In Code Blocks]]` code block and [[real]]",
        "`a` [[b]] ``c ` d`` [[e]] ``` unmatched [[f]]",  # a span closes at a run of its own length only
        "`<T>` and `\\n` inside spans, [Vec](ch08-01-vectors.md) outside",
        "![[p.png]]`code`[[n]]`![[q.png]]`",
        "`[x](y.md)` [l](z.md) `](javascript` [[w]]",
        "`x\n[[y]]` [[z]]",  # a span across a line break
        "<b>[[h]]</b> `<b>` <i>[[w]]</i>",  # inline HTML: its inside is no link
        "[ ] #task<br>[[#Header Links]] then<br>[[Other File#H]] <!-- [[commented]] --> a < b > c [[d]]",
        "<a href='[[x]]'>[l](y.md)</a>",
        "[link_in_task_markdown_link](link_in_task_markdown_link.md) [a_b](c.md#^block)",
        # wikilinks met before any code span: the wikilink rule reads their inside whole
        "[[a`b]] `c`", "[[a <b> c]]", "Add [[Tasks Api#`run (a string) => string;`|run()]] and `x`",
        "`c` then [[Deps#`id`|the `id`]] and ![[e`f.png]]",
    ],
)
def test_plain_texts_are_read_as_the_parser_reads_them(text: str) -> None:
    found = plain_links(text)
    assert found is not None
    assert _plain(found) == _by_parser(text)


@pytest.mark.parametrize(
    "text",
    [
        "[a `]` b](x.md) [[w]]",  # a label reaching over a code span
        "`a [[b` c]]",  # a span closing inside what looks like a wikilink
        "[a`b](x.md)",  # a backtick in a label
        "[[w]] \\`x` [[v]]",  # an escaped backtick
        "[_a_](x.md)",  # emphasis in a label
        "[a_](x.md)",
        "\\[[escaped]]",
        "<http://a.b/[[x]]> [[h]]",  # an autolink
        "[[]](x.md)", "[[]][x]",
        "[[one [[two]]",
        "[[a]]]",
        "[[split\nline]]",
        "[x][[w]]",  # a full reference's label
        "[a [[w]] b]",
        "[x][y] [[w]]",
        "[*em*](x.md)",  # markup in a label
        "[a&amp;b](x.md)",  # an entity in a label
        "[t](x.md \"title\")",
        "[p](a(b).md)",
        "[s](a b.md)",
        "[x](a%zz.md)",  # a percent sign markdown-it encodes
        "[x](café.md)",  # a destination markdown-it encodes
        "[j](javascript:alert(1)) [[w]]",
        "[j](JavaScript:x)",
        "[l](<x y.md>)",
    ],
)
def test_anything_else_is_left_to_the_parser(text: str) -> None:
    assert plain_links(text) is None


def test_with_reference_definitions_any_bracket_pair_is_left_to_the_parser() -> None:
    assert plain_links("[!info] [[x]]", references=True) is None
    assert plain_links("[a][b] [[x]]", references=True) is None
    assert plain_links("[[x]] and [[y]]", references=True) == [PlainLink(False, "x", 0), PlainLink(False, "y", 10)]
    found = plain_links("[a](b.md) [[y]]", references=True)
    assert found is not None and _plain(found) == _by_parser("[a](b.md) [[y]]", "[a]: c.md")


_PARTS = [
    "[[a]]", "![[b.png]]", "[[c|d]]", "[!note]", "[^1]", "[x]", "[]", "[x](y.md)", "[x][y]", "]", "[", "text", " ",
    "\n", "!", "*e*", "(p)", ":", "[l](a%20b.md#h)", "[e]()", "[u](https://e.com/a?b=c)", "[j](javascript:x)", "[s](a b)",
    "[p](a(b))", "[m](x%zz)", "[*e*](x.md)", "[a&amp;b](c.md)", "&amp;", "&", "%", "_u_", "[t](x.md \"t\")", "![i](p.png)",
    "[sp ](./n.md)", "[q](data:x)", "[r](9A:b)", "[v](#h)", "[w](a/b:c)", "(", ")", "~~", "$",
    "`", "``", "```", "`[[s]]`", "``[[t]] ` u``", "`[k](m.md)`", "`<`", "`\\`", "\\", "<b>", "[a_b](c.md)",
    "[_a](c.md)", "[x](a.md#^b)", "[a`b](c.md)", "[[a`b]]", "<br>", "<!-- [[c]] -->", "<http://a.b>", "<", ">",
    "<a href='[[x]]'>", "</i>", "<x@y.z>", "< b>", "[[]]", "![[]]", "[[]](", "[[x `y` z]]", "[[a<b>]]", "[[`", "`]]", "[[p|`q`]]",
]  # fmt: skip


@pytest.mark.parametrize("references", ["", "[y]: z.md"])
def test_generated_texts_agree_with_the_parser(references: str) -> None:
    rng = random.Random(5)
    taken = links = coded = html = 0
    for _ in range(6000):
        text = "".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 8)))
        found = plain_links(text, references=bool(references))
        if found is not None:
            taken += 1
            links += any(link.destination is not None for link in found)
            coded += "`" in text and bool(found)
            html += "<" in text and bool(found)
            assert _plain(found) == _by_parser(text, references), repr(text)
    assert taken > 800 and links > 300 and coded > 150 and html > 150
