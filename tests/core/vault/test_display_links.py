"""Bare URLs and addresses (and dollar math, literal backticks, labels with markup) read without markdown-it read as it reads them.

Cairn's parser links bare `https://…`, `www.…`, `mailto:`/`xmpp:` and e-mail addresses with
mdit-py-plugins' GFM autolink plugin; `core.vault.display_plain_inline` finds them with the
plugin's own matchers (`core.vault.gfm_autolinks`). Where they start, where trailing punctuation
ends them, what may stand before them and where they are off (link labels, `<a>` tags) must be
the plugin's: checked on hand cases, on generated mixes of URL shapes and neighbours, and (in
`test_display_plain.py`) on every real chunk.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from core.vault import gfm_autolinks
from core.vault.display_text import display_text, plain_text
from tests.core.vault.test_display_plain import REPO, assert_alike, flat


@pytest.mark.parametrize(
    "text",
    [
        "a bare https://x.org link",
        "See https://github.com/simonw/til/blob/main/README.md, then (https://x.org/a_(b)) and https://x.org/a).",
        "**https://x.org**: *see https://x.org/a_b* and _https://x.org/a_",
        "Mail me at first_last@example.com or a.b+c@d-e.org. Not @simonw, not a!b@c.de, not x@y.",
        "mailto:a@b.co and xmpp:a@b.co/res, www.example.com/path?q=1, wwww.x.com, www.x",
        "Tip: a colon, ahttps://x.org, HTTPS://x.org, http://x, https://x.org/%41%20b and https://x.org/`code`",
        "==https://x.org== and [see https://x.org](https://y.org) then https://z.org<br>after",
        '<a href="u">https://x.org</a> https://y.org and <a id="x"></a> www.z.org, </a> [see https://x.org](u)',
        "| link | https://x.org/a |\n|---|---|\n| www.y.org | a@b.co |",
        "- [ ] https://x.org/task\n\n> [!tip] https://x.org\n> www.y.org www.bücher.ch",
    ],
)
def test_bare_links_are_read_without_markdown_it(text: str) -> None:
    plain = plain_text(text)
    assert plain is not None
    assert flat(plain) == flat(display_text(text))


@pytest.mark.parametrize("text", ["https://xn--bcher-kva.ch/a", "https://bücher.ch/a", "see www.xn--bcher-kva.ch and https://bücher.ch"])
def test_a_host_markdown_it_would_decode_is_left_to_it(text: str) -> None:
    assert plain_text(text) is None


def test_generated_link_mixes_read_alike() -> None:
    before = ["", " ", "(", "*", "_", "**", "a", "x_", "[", "[a ", "`c`", "==", "<b>", '<a href="u">', "</a>", "\n", "~", ":", "-", "a.", "é"]
    bodies = [
        "https://x.org", "http://a.b/c_d", "https://x.org/(a)", "https://x.org/(a", "https://x.org/a)b)", "www.x.com",
        "www.x", "www.a_b.c", "https://x", "https://a_b.c/d", "https://x.org/a_b_", "mailto:a@b.co", "mailto:a@b",
        "xmpp:a@b.co/r/s", "xmpp:a@b@c.d", "a@b.com", "a.b+c@d-e.org", "a@b", "a@b.c_", "a@b.c-", "@user", "a@@b.c",
        "https://x.org/%41", "https://x.org/a?b=c&d=e", "https://x.org/`a`", "https://x.org/é", "http://", "https:/x",
        "https://x.org/a*b", "https://x.org/~a~", "https://x.org/a<b", "https://x.org/[a](b)", "www.x.com/a==b",
        "https://x.org/a&quot;", "https://x.org/a;", "https://1.2.3.4:8080/p", "https://-x.org", "wikipedia.org",
    ]  # fmt: skip
    after = ["", " ", ".", ",", ")", "))", "!", "?", "'", '"', "]", "](u)", "*", "**", "_", ";", ":", "<br>", " text", "==", "`", "…", "\n"]
    rng = random.Random(30)
    texts = []
    for n in range(15000):
        parts = [rng.choice(before) + rng.choice(bodies) + rng.choice(after) for _ in range(rng.randint(1, 4))]
        texts.append((str(n), rng.choice(["", "text ", "- ", "> ", "# "]) + rng.choice([" ", "", "\n"]).join(parts)))
    assert assert_alike(texts) > 4000


def test_the_rules_restated_are_the_plugins() -> None:
    """What `gfm_autolinks` restates from the plugin's index.py (beside markdown-it imports) is the installed release's."""
    from mdit_py_plugins.gfm_autolink import _match, index

    assert gfm_autolinks.VALID_PREV == _match._VALID_PREV_CHARS
    assert gfm_autolinks.matchers().__file__ == _match.__file__
    assert index._PROTO_RE.pattern == r"(?:^|.)(https?|mailto|xmpp)$"  # the schemes `PROTOCOLS` lists
    assert sorted(gfm_autolinks.PROTOCOLS) == sorted(["https", "http", "mailto", "xmpp"])


def test_without_the_plugins_matcher_file_links_go_to_markdown_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frozen build keeps the plugin in its archive, where there is no `_match.py` to load: a text
    with a bare link is then left to markdown-it, and the process looks for the file only once."""
    looked: list[str] = []
    real_find_spec = gfm_autolinks.importlib.util.find_spec

    def no_plugin_file(name: str, package: str | None = None) -> object:
        looked.append(name)
        return None if name == "mdit_py_plugins" else real_find_spec(name, package)

    monkeypatch.setattr(gfm_autolinks.importlib.util, "find_spec", no_plugin_file)
    gfm_autolinks._loaded_matchers.cache_clear()
    try:
        assert plain_text("see https://x.org and www.y.org") is None
        assert plain_text("and then https://z.org/a") is None  # asked again: the answer was kept
        assert plain_text("no link here") is not None
        assert looked.count("mdit_py_plugins") == 1
        assert "x.org" in flat(display_text("see https://x.org and www.y.org"))
    finally:
        gfm_autolinks._loaded_matchers.cache_clear()


def test_a_snippet_with_links_does_not_import_markdown_it() -> None:
    code = (
        "import sys; from core.vault.display_text import one_line; "
        "print(one_line('See https://x.org/a, www.y.org and me@x.org.')); "
        "print(sorted(m for m in sys.modules if m.startswith(('markdown_it', 'mdit_py_plugins'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["See https://x.org/a, www.y.org and me@x.org.", "[]"]


def test_generated_math_backtick_label_and_indent_mixes_read_alike() -> None:
    """`$` (dollar math or text), unmatched backtick runs, wikilink labels with markup, paragraphs 1-3 spaces in."""
    atoms = [
        "$a$", "$5", "$ 5", "3$", "$x$4", "$a b$", "$a $", "$$", "$", "a$b$c", "`", "``", "```", "`c`", "``a`b``", "`$`",
        "[[N|*em*]]", "[[N#H|ON_HOLD]]", "[[N#`id`|the `id`]]", "[[N|a $x$ b]]", "[[N|==hi==]]", "[[N#^b|x_y]]", "[[N|a <b>]]",
        "*em*", "**b**", "_u_", "snake_case", "==hl==", "[l](u)", "[a $b](u)", "<br>", "https://x.org", "a@b.co", "text",
        "(", ")", ".", ":", "\\", "&amp;", "~~s~~", "\\*", "\\_", "\\\\", "\\a", "\\\n", "\\$", "&lt;", "&nosuch;", "&copy",
        "& ", "&Amp;", "\\**", "\\é", "\\[", "[a\\]b](u)",
    ]  # fmt: skip
    heads = ["", "", " ", "  ", "   ", "    ", "- ", "1. ", "  - ", "> ", "# "]
    rng = random.Random(31)
    texts = []
    for n in range(12000):
        lines = []
        for _ in range(rng.randint(1, 5)):
            words = [rng.choice(atoms) for _ in range(rng.randint(1, 5))]
            lines.append(rng.choice(heads) + rng.choice([" ", ""]).join(words))
        texts.append((str(n), rng.choice(["\n", "\n\n"]).join(lines)))
    assert assert_alike(texts) > 2000


def test_generated_emphasis_mixes_read_alike() -> None:
    """Runs of `*` and `_` beside letters, spaces, ASCII and Unicode punctuation and symbols: paired as markdown-it pairs them."""
    atoms = ["*", "**", "_", "__", "***", "a", "é", "1", " ", " ", "—", "“", "»", ".", ",", "(", ")", "~/", "/", "-", "€", "`c`", "[[w]]", "==", "\n"]
    rng = random.Random(32)
    texts = [(str(n), "".join(rng.choice(atoms) for _ in range(rng.randint(2, 14)))) for n in range(20000)]
    assert assert_alike(texts) > 5000


@pytest.mark.parametrize(
    "text",
    [
        "See [the tuple][tuples], [Tuples][], [tuples] and [TUPLES ][], not [other] or [x][other].\n\n"
        "[tuples]: ch03-02-data-types.html#the-tuple-type\n[two words]: https://x.org",
        "[two\nwords] and [*em* text][two words], ![not a ref](a.png)\n\n[Two  Words]: u\n\n[`code`][two words].",
        "A paragraph\n[two words]: u-as-text\n\n[two words]: u",
    ],
)
def test_reference_links_are_read_without_markdown_it(text: str) -> None:
    plain = plain_text(text)
    assert plain is not None
    assert flat(plain) == flat(display_text(text))


def test_generated_reference_mixes_read_alike() -> None:
    """One-line reference definitions and the brackets that may use them: full, collapsed, shortcut, undefined."""
    atoms = [
        "[a]", "[A ]", "[a][]", "[x][a]", "[x][b]", "[*e*][a]", "[b]", "[a b]", "[a\nb]", "[^1]", "![a]", "![i](p.png)",
        "[l](u)", "[[w]]", "[x] [a]", "[a]:", "text", "**b**", " ", " ", "(", ")", "`[a]`", "[x][]", "[x][a", "]",
    ]  # fmt: skip
    defs = ["[a]: /u", "[A]: https://x.org", "[a b]: u", "[b]: u 'title'", "[c]: <u>", "  [a]: u", "[^1]: note", "[a]: javascript:x"]
    rng = random.Random(33)
    texts = []
    for n in range(12000):
        body = ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 3))]
        lines = body + [rng.choice(defs) for _ in range(rng.randint(0, 3))]
        rng.shuffle(lines)
        texts.append((str(n), rng.choice(["\n", "\n\n"]).join(lines)))
    assert assert_alike(texts) > 2000


def test_generated_inline_link_mixes_read_alike() -> None:
    """Inline links and images: labels over lines, destinations with parentheses, titles, spaces before `)`."""
    labels = ["a", "*e* b", "“q\nr”", "`c`", "a\nb\nc", "", "x_y", "[n]", "a ==h==", "https://x.org"]
    dests = ["u", "#frag", "https://x.org/a_(b)", "a(b)c(d)", "u((x))", "u(", "u)", "", "<u v>", "u v", "javascript:x", "a\\)b", "ü/é"]
    titles = ["", ' "t"', " 't'", ' "t)(x"', '  "t"  ', " ", ' "a\nb"', " (t)", '"t"', ' "t" x', " 'it''s'"]
    rng = random.Random(34)
    texts = []
    for n in range(12000):
        parts = []
        for _ in range(rng.randint(1, 3)):
            link = f"{rng.choice(['', '!'])}[{rng.choice(labels)}]({rng.choice(dests)}{rng.choice(titles)})"
            parts.append(rng.choice(["", "see ", "**", "(", "a"]) + link + rng.choice(["", ".", "**", ")", " x", "\n"]))
        texts.append((str(n), " ".join(parts)))
    assert assert_alike(texts) > 1500
