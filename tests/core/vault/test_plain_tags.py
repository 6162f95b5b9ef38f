"""`plain_tags` gives exactly the tags markdown-it's inline tokens give, or steps aside."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from core.vault import chunker
from core.vault.frontmatter import parse_front_matter
from core.vault.plain_tags import plain_tags
from core.vault.scanner import Scanner, read_note_bytes
from core.vault.simple_blocks import simple_blocks
from core.vault.simple_note import InlineText, parse_inline

VAULTS = next((p / "shared/data/vaults" for p in Path(__file__).resolve().parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))
_MD = MarkdownIt("commonmark").enable("table")


def _by_markdown_it(content: str) -> list[str]:
    """Every tag (repeats kept) in the text children of the inline tokens, as the chunker reads them."""
    (token,) = parse_inline(_MD, [InlineText(content, 0)])
    return [m.group(1).lower() for child in token.children or [] if child.type == "text" for m in chunker._TAG.finditer(child.content)]


def _agrees(content: str) -> bool:
    got = plain_tags(content)
    return got is None or got == _by_markdown_it(content)


@pytest.mark.parametrize(
    ("content", "tags"),
    [
        ("[ ] #task Take out the trash 🔁 every week 📅 2024-03-04", ["task"]),
        ("[x] #task **Done** today ✅ 2025-06-19 #XX #Y/z", ["task", "xx", "y/z"]),
        ("[<] #task `<` and `#not` a tag, ``a ` #b`` #c", ["task", "c"]),
        ("`unclosed #a and ``#b``", ["a"]),
        ("*#em* a*#b* **#c**x #d*", ["em", "b", "c", "d"]),
        ("snake_case #tag_one_two and [[link #no]] #x", ["tag_one_two", "no", "x"]),
        ("line one #a  \n  #b line two\n#c", ["a", "b", "c"]),
        ("arrows <- and a <] box #t", ["t"]),
        ("see <https://x.org/#frag> #t", None),
        ("write <me@x.org> #t", None),
        ("<b>#bold</b> <!-- #hidden --> x<br>#after", ["bold", "after"]),
        ("<a title='`#a`'> `<b>` #c <!-- `#d` -->", ["c"]),
        ("a <!-- unclosed #x", ["x"]),
        ("_#em_ #t", None),
        ("[a](#b) #t", ["t"]),
        ("[ ] #task Link [link_in_task_markdown_link](Test%20Data/x.md#heading) x[#in](y.md)#after", ["task", "in", "after"]),
        ("![#alt](p.png) [`#c`](d.md) #t []() [a]()", None),  # a code span in a label: the parser's
        ("![#alt](p.png) #t []() [a]() `[x](#no)`", ["t"]),
        ("[[w]] [a](b.md) #t", None),
        ("[a](javascript:x) #t", None),
        ("\\#escaped #t", ["escaped", "t"]),  # an escaped `#` is the text `#`
        ("&#35;entity #t", None),
        ("&amp; #t", None),
        ("[&] #task `&` Symbolism & more &1 #x&", ["task", "x"]),
    ],
)
def test_plain_tags_reads_or_declines(content: str, tags: list[str] | None) -> None:
    assert plain_tags(content) == tags
    assert _agrees(content)


def test_many_backtick_runs_decline() -> None:
    assert plain_tags("`a` " * 40 + "#t") is None


def test_random_texts_agree_with_markdown_it() -> None:
    rng = random.Random(20261127)
    pieces = ["#", "#a", "#tag", "a", "é", "1", " ", "\n", "`", "``", "*", "**", "_", "__", "[", "]", "(", ")"]
    pieces += ["<", ">", "!", "/", "-", "[[x]]", "📅", "\t", "~", "=", ":", "<a", "<-", "&", "\\", "x_y", "_x", "#a_"]
    pieces += ["<br>", "</b>", "<!--", "-->", "<a b='`'>", "<x@y.z>", "<http:a>", "<?", "?>", "'", '"']
    pieces += ["&amp;", "&#35;", "&x", "& ", "&#", "&1", "[l](x.md#h)", "![i](p.png)", "[#a](b.md)", "](", "[a_b](c.md)", "[x](#t)", "[]()", "[x]"]
    pieces += ["_a_", "_#t_", "__b__", "#t_", "a_ ", " _a", "_\n"]
    pieces += ["\\[", "\\]", "\\#", "\\_", "\\\\", "\\`", "\\*", "\\!", "\\&", "\\(", "\\-", "\\/", "\\a", "\\\n"]
    linked = escaped = 0
    for _ in range(6000):
        content = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))).strip()
        assert _agrees(content), content
        linked += "](" in content and plain_tags(content) is not None
        escaped += "\\" in content and plain_tags(content) is not None
    assert linked > 200  # texts with inline links are read too, not only declined
    assert escaped > 200  # and texts with escapes


@pytest.mark.skipif(not VAULTS.is_dir(), reason="the real vaults are not here")
def test_every_inline_text_of_the_real_vaults_agrees() -> None:
    read = declined = 0
    for vault in sorted(VAULTS.iterdir()):
        for entry in Scanner(vault).scan().entries:
            raw = read_note_bytes(entry)
            if not isinstance(raw, bytes):
                continue
            simple = simple_blocks(raw[parse_front_matter(raw).end_byte :].decode("utf-8", "replace"))
            for text in simple.inline if simple is not None else []:
                if chunker._MAYBE_TAG.search(text.content) is None:
                    continue
                assert _agrees(text.content), (entry.rel_path, text.content)
                read += plain_tags(text.content) is not None
                declined += plain_tags(text.content) is None
    assert read > 4 * declined  # the plain reading covers most texts that may hold a tag
