"""Display text read without markdown-it is markdown-it's display text, or steps aside.

`core.vault.display_plain` keeps markdown-it out of a cold `cairn search` (snippets are
display text). Its text must be the markdown-it path's on one line (`one_line`, what
snippets and list rows show): checked on every chunk and heading of the real vaults, the
committed fixtures, a generated Obsidian-shaped vault and generated line mixes, and on the
snippets of real searches with the fast path on and off.
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.vault import display_text as dt
from core.vault.display_text import display_text, plain_text
from core.vault.display_tokens import PlainToken
from core.vault.notes import parse_note
from tests.core.vault.test_display_text import headings_of
from tests.core.vault.test_simple_blocks import _LINES

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
VAULTS = next((p / "shared/data/vaults" for p in REPO.parents if (p / "shared/data/vaults/tldr").is_dir()), Path("/nonexistent"))
sys.path.insert(0, str(REPO / "bench"))

from synth_vault import generate_vault  # noqa: E402


def chunks_of(root: Path, vault: str, step: int = 1) -> list[tuple[str, str]]:
    """(note, chunk text) of every `step`-th note of a vault, as the index stores them."""
    out = []
    for path in sorted(root.rglob("*.md"))[::step]:
        raw = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        out += [(rel, c.text) for c in parse_note(vault, rel, raw, size=len(raw), mtime_ns=0).chunks]
    return out


def flat(text: str) -> str:
    return " ".join(text.split())


def assert_alike(texts: list[tuple[str, str]]) -> int:
    """Every text the plain reader takes reads as markdown-it reads it; how many it took."""
    taken = 0
    for where, text in texts:
        plain = plain_text(text)
        if plain is not None:
            taken += 1
            assert flat(plain) == flat(display_text(text)), (where, text)
    return taken


@pytest.mark.parametrize(
    "text",
    [
        "# Title\n\nA paragraph with **bold**, *em*, _em_, snake_case and `code` [[Note|label]] ![[Other#Part]].",
        "> [!tip]+ Keep it short\n> A tip with **bold** text.\n>\n> > [!question] Inner\n> > Nested.",
        "> [!note]\n> Untitled body.\n\n> [!todo] Only a title",
        "- [ ] open task 📅 2025-01-02\n- [x] done task\n  - [-] custom status\n  - child [[link]]\n\n1. one\n2. two\n\n3) new list",
        "| Key | Value |\n| :-- | --: |\n| [[a\\|b]] | #tag |\n| short |\n| a | b | extra |",
        "Text with a note[^1] and [^1] again.\n\n[^1]: The note's own text.",
        "```py\nx = 1\n\tindented\n```\n\n<!-- hidden -->\n\n> More information: <https://example.org/a_b>.",
        "See [the docs](https://x.org/p) and [[Home]], a [bracket] and a stray ] here.",
        "**Tip:** an image ![Create or edit](../images/modal.png) and **`code`** in bold.",
        '<span class="related-pages">#index-pages</span>\n\n<div>\nA block\n</div>\n\nText<br>with a <b>tag</b>, 1 < 2.',
        "> [!released]\nIntroduced in 3.0 (a lazy line).\n> Quoted again\nand lazy **again**.\n\nAfter.",
        "==A highlight== opening a line, ==one with **bold** and [[Note|a link]]==, a==b==c, x == y and ===z==.",
        "    indented code\n\n      more\n\n# H\n    code under a heading\n\n- item\n\n      code in an item",
        "A paragraph\n  goes on indented\n        <span>and deeper</span> with **bold**\n    - not an item",
        '<a id="local-docs"></a>\n\n## Local docs\n\nSee [`Vec<T>`][vec], [`String`](https://x.org/s) and ![`x` y](p.png), [`x`.',
        "- a\n    - sub-list four spaces in\n    - [ ] its task\n- b\n\n1. step\n    - point\n1. next\n\npara\n   - interrupts\n  * another list",
        "Text[^1]\n\n[^1]: the note\n> [!tip] A callout right under it\n> body\n\nx[^2]\n\n[^2]: two\n## Heading",
        "# Title\n---\ntext\n\n***\n\n- item\n\n- - -\n\n> quoted\n>\n> ___",
        "The tag gives **`tag`**. A **[[Backlinks|Backlink]]**, _last in (LIFO)_. and *a*b, a __ b, x__y__z.",
        "- [ ] ==urgent== task\n\n> [!tip] ==Title==\n> **==both==** and ==*em*== then ==a\nb==.",
        "$math$ costs $5, $ 10, 3$a$, $a $b, $x$4 and ==a `b==` c== with an unmatched ` and `` two",
        "  a paragraph two in\n\n1. item\n\n    ![image](a.png) and text one past the item's column\n\n   **Note**: three in",
        "a*b*c, x *y*—z, _~/projects/x_, _/_ then case-_insensitive_ and _dangling\npointer_—a, «*q*» stack_, * a",
        "an \\*escape\\*, \\a, a \\\n break, &amp; &lt;b&gt; &copy &nosuch; & x",
        "![image](pic.png 'title'), [on Wikipedia](https://x.org/wiki/A_(b)) and [“a\nb”](#a-b \"t\")",
        "[[Status Types#ON_HOLD|ON_HOLD]], [[a|*em* `code` label]], [[Task Dependencies#`id`|allowed `id` characters]]",
    ],
)
def test_the_usual_shapes_are_read_without_markdown_it(text: str) -> None:
    plain = plain_text(text)
    assert plain is not None
    assert flat(plain) == flat(display_text(text))


@pytest.mark.parametrize(
    "text",
    [
        "tab\there",
        "para\n---",
        "para\n===",
        "para\n   -  an indented item, spaced out",
        "para\n  # an indented heading",
        "[^1]: def\n\n    its indented block",
        ">\n    > a quote line four spaces in",
        "- item\nlazy line",
        "> # heading\nlazy line",
        "> - item\nlazy line",
        "[a]: /url 'title'\n\n[a]",
        "a numeric &#123; entity",
        "an escaped \\` tick",
        "\\**not a run**",
        "- [a]: /url\n\n[a]",
        "[a]: /url\ntext under it\n\n[a]",
        "<script>\nx\n</script>",
        "[a ==label==](u)",
        "[a `]` b](u)",
        "~~strike~~",
        "***both***",
        "an inline^[footnote]",
        "[link](<with space> 'title')",
        "an unmatched ```run of three",
        "[a $b]$ c](u)",
        "$a\\$ b$",
        "-  two spaces after the marker",
    ],
)
def test_anything_else_is_left_to_markdown_it(text: str) -> None:
    assert plain_text(text) is None


def test_the_committed_fixtures_read_alike() -> None:
    texts = [(f"{d.name}/{rel}", text) for d in sorted(FIXTURES.iterdir()) if d.is_dir() for rel, text in chunks_of(d, d.name)]
    texts += [(d.name, part) for d in FIXTURES.iterdir() if d.is_dir() for path in headings_of(d, d.name) for part in path.split(" > ")]
    assert len(texts) > 50
    assert assert_alike(texts) > 20


def test_a_generated_obsidian_vault_is_read_without_markdown_it(tmp_path: Path) -> None:
    """The shapes of the 10k-note benchmark vault: a declined chunk would import markdown-it into a cold search."""
    generate_vault(tmp_path / "v", 120, seed=3, shape="obsidian")
    texts = chunks_of(tmp_path / "v", "v")
    taken = assert_alike(texts)
    assert taken >= 0.99 * len(texts)


def test_generated_line_mixes_read_alike() -> None:
    extra = [
        "- [ ] task", "- [x] done **b**", "- [-] custom", "1. one", "2. two", "3) three", "> [!tip] Title", "> [!note]",
        "> body text", ">", "> - item", "| a | b |", "|---|---|", "| [[x\\|y]] | c |", "| 1 | 2 | 3 |", "| only |",
        "text[^1]", "[^1]: the note", "[^2]: other", "see [^2] and [^1]", "```", "```py", "code line", "~~~", "<!-- c -->",
        "<https://x.org/a_b>", "<http://x.org/%41>", "**bold** and *em*", "_em_ x", "a_b_c", "**a**b", "*a **b** c*",
        "[l](u) and [[w]]", "[x] y", "[a](b c)", "`code` and ``a`b``", "  - nested", "    - deeper", "  more", "   three",
        "# H", "## H2 #", "text  ", "", "", "", "**a** **b**", "__init__ x", "*a*b", "a*b*", "**a*", "(**a**)", '"*q*"',
        "**a.**", "x **y**.", "[**a**](u)", "**[[w]]**", "a ** b", "x_", "***a***", "  - [ ] sub task", "> - [x] done",
        "> | a | b |", "> |---|---|", "- > quote in item", "  > quote in item", "[^n]: def with [^1]", "x[^3]",
        "<https://a.b/c?d=e#f>", "<https://ex.com/ü>", "<mailto:a@b.c>", "  ```", "|:-:|", "- a | b", "a | b",
        "> [!tip]- Tip", "> > [!bug] inner", "1. [ ] t", "10. ten", "  continuation", "``` \t", "-  two",
        "**Tip:** text", "**[l](u)** x", "x **`c`**", "*(a)*", "**.**", "**a:**.", "![alt](p.png) x", "![pic.png](p.png)",
        "![a *b*](u)", "!x", '<span class="a">#t</span> x', "<br> text", "a <b>bold</b> c", "<div>", "</div>", "<details>",
        "<summary>S</summary>", "x < y > z", '<a href="u">l</a>', "<!-- multi", "line -->", "<script>", "alert(1)", "</script>",
        "a<br/>b", "<mailto:a@b.c>", "<foo:bar>", "<x@y.z>", "[see https://x.org](https://x.org)", "[a @b](u)", "\t",
        "> [!released]", "lazy text", "> # h", "> - i", "01. zero-led", "01) zero-led", "  01. nested zero-led",
        "==hi== there", "a ==b **c** d== e", "===x==", "== a ==b== c==", "**==x==**", "==*a*==", "x == y", "==a", "b==",
        "==[l](u)== and ==[[w]]==", "*a ==b* c==", "==x==**y**", "==a `b==` c", "[a ==b== c](u)", "==a\\=b==", "a= =b",
        "    code x", "      deeper code", "        <span>s</span>", "  two in", "   three in", " one in", "    ```", "   ```",
        "  # h", "   ---", "    ---", "    | a |", "  > q", "    > q", "   <!-- c -->", "  [^1]: x", "   1. x", "    * a",
        "[`a`][r]", "[`Vec<T>`](u) x", "<a id=\"x\"></a>", '<a href="u">', "</a>", "`]` [", "[`]`](u)",
        " - a", "  * b", "   + c", "  1. o", " 2) p", "   - [ ] t", "      - w",
        "---", "***", "- - -", "___", "* * *",
        "**`t`**.", "*a*b", "_a_b", "a __ b", "x *y*—z", "**[[w]]**,", "(*a*)", "_é, __", "*,/ ** !",
    ]  # fmt: skip
    pool = _LINES + extra * 2
    rng = random.Random(30)
    texts = []
    for n in range(12000):
        text = "\n".join(rng.choice(pool) for _ in range(rng.randint(1, 8))) + rng.choice(["", "\n", " "])
        texts.append((str(n), text))
    assert assert_alike(texts) > 2000


@pytest.mark.skipif(not VAULTS.is_dir(), reason="needs the shared real vaults")
@pytest.mark.parametrize(
    ("vault", "least_share"),
    [("tldr", 0.95), ("simonw-til", 0.75), ("obsidian-tasks-docs", 0.8), ("obsidian-tasks-demo", 0.75), ("rust-book", 0.8)],
)
def test_every_real_chunk_reads_alike(vault: str, least_share: float) -> None:
    root = VAULTS / vault
    # tldr's 6,400 pages are of one shape: every fifth keeps the test short.
    texts = chunks_of(root, vault, step=5 if vault == "tldr" else 1)
    taken = assert_alike(texts)
    assert taken >= least_share * len(texts)
    assert_alike([(vault, part) for _, text in texts[:400] for part in text.partition("\n")[0].lstrip("# ").split(" > ")])


def test_search_snippets_are_the_same_with_and_without_markdown_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    generate_vault(vault, 80, seed=5, shape="obsidian")
    shutil.copytree(FIXTURES / "obsidian_constructs", vault / "constructs")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    try:
        engine.add_vault(vault, name="v")
        engine.sync()
        queries = ("database backup schedule", "release roadmap review", "garden recipe", "callout", "table", "task")

        def snippets() -> list[tuple[str, int, str, tuple[str, ...]]]:
            dt.one_line.cache_clear()
            hits = [h for q in queries for h in engine.search(SearchRequest(q, k=10, mode="keyword", grouped=True)).hits]
            return [(h.chunk.rel_path, h.chunk.ordinal, h.snippet, tuple(m.snippet for m in h.more)) for h in hits]

        read = dt.plain_tokens
        taken: list[bool] = []

        def counted(text: str) -> list[PlainToken] | None:
            tokens = read(text)
            taken.append(tokens is not None)
            return tokens

        monkeypatch.setattr(dt, "plain_tokens", counted)
        fast = snippets()
        assert len(fast) >= 12 and sum(taken) >= 12  # real hits, their snippets read without markdown-it
        monkeypatch.setattr(dt, "plain_tokens", lambda text: None)
        assert snippets() == fast
    finally:
        engine.close()
        dt.one_line.cache_clear()


def test_the_html_patterns_are_markdown_its_own() -> None:
    """Copied so a search need not import markdown-it to find HTML: they must stay the installed release's."""
    import importlib

    from markdown_it.common import html_blocks, html_re
    from markdown_it.common.utils import normalizeReference
    from markdown_it.rules_block.html_block import HTML_SEQUENCES

    from core.vault import display_html, display_plain_marks

    autolink = importlib.import_module("markdown_it.rules_inline.autolink")
    assert display_html.HTML_TAG.pattern == html_re.HTML_TAG_RE.pattern
    assert display_html.OPEN_CLOSE_TAG == html_re.HTML_OPEN_CLOSE_TAG_STR
    assert list(display_html.BLOCK_NAMES) == html_blocks.block_names
    ours = [(a.pattern, a.flags, b.pattern, b.flags, c) for a, b, c in display_html.HTML_SEQUENCES]
    assert ours == [(a.pattern, a.flags, b.pattern, b.flags, c) for a, b, c in HTML_SEQUENCES]
    assert (display_html.AUTOLINK.pattern, display_html.EMAIL.pattern) == (autolink.AUTOLINK_RE.pattern, autolink.EMAIL_RE.pattern)
    escape, entity = importlib.import_module("markdown_it.rules_inline.escape"), importlib.import_module("markdown_it.rules_inline.entity")
    assert display_plain_marks.ASCII_PUNCT == escape._ESCAPED
    assert (display_plain_marks._NAMED_ENTITY.pattern, display_plain_marks._DIGITAL_ENTITY.pattern) == (entity.NAMED_RE.pattern, entity.DIGITAL_RE.pattern)
    assert display_plain_marks._entities() == entity.entities
    labels = ["a", " A  b\n", "Straße", "ẞ", "İ x", "ϴ", "\u2003a\u2028b\xa0", "K Å Ω", "ǅ"]
    assert [display_html.reference_key(label) for label in labels] == [normalizeReference(label) for label in labels]
