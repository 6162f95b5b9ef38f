"""Links between notes: read them from markdown and resolve them the way Obsidian does.

Links come from markdown-it-py's tokens, not from regexes over the raw text, so a
`[[link]]` inside a code span or fence is code and never counts. Wikilinks are an
inline rule added to the parser (mdit-py-plugins has no wikilink plugin).

Resolution follows Obsidian: names match case-insensitively and Unicode-normalised,
the same name in two folders goes to the one beside the linking note (else the
shortest path), a path-like target matches a path suffix, and front-matter aliases
come after file names. Dendron's dotted names (`proj.sub.note`) are file names too.
Resolving a target to a note is `core.vault.link_resolver`.
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from core.base.models import Link, LinkKind
from core.vault.simple_note import InlineText, parse_inline
from core.vault.wikilinks_plain import LinkChild, PlainInline, PlainLink, plain_links

if TYPE_CHECKING:  # markdown-it loads with the first parser: a keyword search never parses markdown
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

#: Embeds of these are attachments (images, PDFs, media), never notes.
ATTACHMENT_EXTS = frozenset(
    "png jpg jpeg gif svg webp bmp avif pdf mp3 wav ogg m4a flac mp4 webm mov mkv canvas excalidraw".split()
)
IMAGE_EXTS = frozenset("png jpg jpeg gif svg webp bmp avif".split())
NOTE_EXTS = (".md", ".markdown")
MAX_CONTEXT = 240
MAX_LINK_BRACKETS = 20_000  # "[" read for links in one note (~0.7 s of markdown-it at worst)
_WIKI_STOP = re.compile(r"\]\]|[\[\n]")
_WEB_DESTINATION = re.compile(r"\s*<?[A-Za-z][A-Za-z0-9+.\-]*:")  # after "](": a URL, not a note


def _may_link(text: str) -> bool:
    """Whether `text` may hold a link to a note: a "[[", or a "](" not followed by a URL's scheme.

    Found by `str.find`: the regular expression it replaces stepped through every character of
    a whole note (~10 ms over a 1 MB book); `find` skips to each "](" in C."""
    if "[[" in text:
        return True
    k = text.find("](")
    while k != -1:
        if _WEB_DESTINATION.match(text, k + 2) is None:
            return True
        k = text.find("](", k + 2)
    return False


def key(name: str) -> str:
    """How Obsidian compares names: Unicode-normalised (NFC) and case-insensitive."""
    return unicodedata.normalize("NFC", name).casefold().strip()


def strip_note_ext(path: str) -> str:
    low = path.lower()
    for ext in NOTE_EXTS:
        if low.endswith(ext):
            return path[: -len(ext)]
    return path


def is_attachment(target: str) -> bool:
    _, _, ext = target.rpartition(".")
    return "." in target and ext.lower() in ATTACHMENT_EXTS


# -- parsing ------------------------------------------------------------------------------


def wikilink_plugin(md: MarkdownIt) -> None:
    """Teach markdown-it `[[target#anchor|label]]` and `![[embed]]` as inline tokens."""
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    start = pos + (3 if embed else 2)
    if not embed and not src.startswith("[[", pos):
        return False
    # The first "]]", "[" or line end decides: a link's inside holds no "[" and no line break,
    # so the search never runs past them (looking for "]]" to the end of the text made a
    # note of unclosed "[[" quadratic: 200,000 took minutes).
    found = _WIKI_STOP.search(src, start)
    if found is None or found.group() != "]]" or found.start() == start:
        return False
    end = found.start()
    inner = src[start:end]
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = inner
        token.meta = {"embed": embed, "pos": pos}
    state.pos = end + 2
    return True


def new_link_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").use(wikilink_plugin)


def split_wikilink(inner: str) -> tuple[str, str, str]:
    """`note#Heading|label` -> ("note", "Heading", "label"); the label defaults to what is shown by Obsidian.

    Short ones are cached: a vault links to the same notes again and again (three strings,
    never changed); a long one is not kept."""
    return _split_short(inner) if len(inner) <= 200 else _split_wikilink(inner)


def _split_wikilink(inner: str) -> tuple[str, str, str]:
    target, _, label = inner.partition("|")
    target = target.removesuffix("\\")  # `[[a\|b]]` in a table cell escapes its pipe from the table
    target, _, anchor = target.partition("#")
    target, anchor, label = target.strip(), anchor.strip(), label.strip()
    if not label:
        label = target if not anchor else (f"{target} > {anchor}" if target else anchor)
    return target, anchor, label


_split_short = functools.lru_cache(maxsize=8192)(_split_wikilink)


def extract_links(
    text: str,
    *,
    first_line: int = 1,
    parser: MarkdownIt | None = None,
    inline: Sequence[InlineText] | None = None,
    references: Sequence[str] = (),
) -> tuple[Link, ...]:
    """Every link in a note body (up to `MAX_LINK_BRACKETS` "["; see `extract_links_capped`)."""
    return extract_links_capped(text, first_line=first_line, parser=parser, inline=inline, references=references)[0]


def extract_links_capped(
    text: str,
    *,
    first_line: int = 1,
    parser: MarkdownIt | None = None,
    inline: Sequence[InlineText] | None = None,
    references: Sequence[str] = (),
) -> tuple[tuple[Link, ...], bool]:
    """Every link in a note body, and whether the note held too many "[" to read them all.

    `first_line` is the file line the body starts on (after front matter). `inline` are the
    note's inline texts when the chunker's plain-note scanner read it: only those that can
    hold a link are parsed, instead of the whole note a second time; `references` are the
    note's link reference definition lines the scanner found (`[text][label]` needs them).

    Links are read up to the `MAX_LINK_BRACKETS`-th "[" (as tags are capped): markdown-it
    tries every "[" as a link label, nested up to its nesting limit, so 200,000 unclosed
    "[[" cost it ~15 s even in linear time; a real note holds a few thousand at most.
    """
    text, inline, capped = _within_cap(text, inline)
    return _extract(text, first_line, parser, inline, references), capped


def _within_cap(text: str, inline: Sequence[InlineText] | None) -> tuple[str, Sequence[InlineText] | None, bool]:
    """`text` (or `inline`) up to the `MAX_LINK_BRACKETS`-th "[", and whether anything was cut."""
    if inline is None:
        if text.count("[") <= MAX_LINK_BRACKETS:
            return text, None, False
        return text[: _nth_bracket(text, MAX_LINK_BRACKETS)], None, True
    kept: list[InlineText] = []
    left = MAX_LINK_BRACKETS
    for part in inline:
        count = part.content.count("[")
        if count > left:
            kept.append(InlineText(part.content[: _nth_bracket(part.content, left)], part.line))
            return text, kept, True
        left -= count
        kept.append(part)
    return text, inline, False


def _nth_bracket(text: str, n: int) -> int:
    """The offset of the (n+1)-th "[" in `text` (which holds more than `n`)."""
    pos = -1
    for _ in range(n + 1):
        pos = text.index("[", pos + 1)
    return pos


def _extract(
    text: str, first_line: int, parser: MarkdownIt | None, inline: Sequence[InlineText] | None, references: Sequence[str]
) -> tuple[Link, ...]:
    if not _may_link(text):
        return ()  # most notes of a code-heavy vault link only to the web: skip the second parse
    md = parser or new_link_parser()
    lines = text.splitlines()
    out: list[Link] = []
    if inline is None:
        for tok in md.parse(text):
            if tok.type == "inline" and tok.children and tok.map is not None:
                _token_links(tok, lines, first_line, out)
        return tuple(out)
    env: dict[str, object] = {}
    if references:
        md.parse("\n".join(references), env)  # markdown-it reads the definitions: the lines alone
    # With definitions, `[text][label]` and `[label]` are links too: every text with a "[" is read.
    for part in inline:
        if "[" not in part.content or not (references or _may_link(part.content)):
            continue
        found = plain_links(part.content, references=bool(env.get("references")))
        if found is None:
            for tok in parse_inline(md, [part], env):
                if tok.children:
                    _token_links(tok, lines, first_line, out)
        elif any(link.destination is not None for link in found):
            _token_links(PlainInline(part, found), lines, first_line, out)
        else:
            _plain_links(part, found, lines, first_line, out)
    return tuple(out)


def _plain_links(part: InlineText, found: list[PlainLink], lines: list[str], first_line: int, out: list[Link]) -> None:
    """The wikilinks `plain_links` read in a text, made directly: no tokens (a third of reading an Obsidian note's links)."""
    row, context = -1, ""
    for embed, inner, pos, _ in found:
        target, anchor, label = split_wikilink(inner)
        if not target and not anchor:
            continue
        at = part.line + part.content.count("\n", 0, pos)
        if at != row:  # several links on one line share its context
            row, context = at, _trim(lines[at].strip()) if at < len(lines) else ""
        out.append(Link(LinkKind.EMBED if embed else LinkKind.WIKI, target, anchor, label, first_line + row, context))


def _token_links(tok: Token | PlainInline, lines: list[str], first_line: int, out: list[Link]) -> None:
    """The links of one parsed inline token, with the line each is on."""
    children: Sequence[Token | LinkChild] = tok.children or []
    start = tok.map[0] if tok.map else 0
    cursor = 0  # search position in tok.content, for links the parser gives no position
    for i, child in enumerate(children):
        link, cursor = _link_from(child, tok.content, cursor)
        if link is None:
            continue
        if link.kind is LinkKind.MARKDOWN:
            link = Link(link.kind, link.target, link.anchor, _text_until_close(children, i + 1))
        row = start + tok.content.count("\n", 0, cursor)
        context = lines[row].strip() if row < len(lines) else ""
        out.append(Link(link.kind, link.target, link.anchor, link.label, first_line + row, _trim(context)))


def _link_from(child: Token | LinkChild, content: str, cursor: int) -> tuple[Link | None, int]:
    if child.type == "wikilink":
        target, anchor, label = split_wikilink(child.content)
        pos = int(child.meta.get("pos", cursor))
        if not target and not anchor:
            return None, pos
        kind = LinkKind.EMBED if child.meta.get("embed") else LinkKind.WIKI
        return Link(kind, target, anchor, label), pos
    if child.type in ("link_open", "image"):
        href = str(child.attrs.get("src" if child.type == "image" else "href", ""))
        found = content.find("](", cursor)
        pos = found if found >= 0 else cursor
        local = local_target(href)
        if local is None:
            return None, pos
        target, anchor = local
        if child.type == "image":
            if not is_attachment(target):
                return None, pos
            return Link(LinkKind.EMBED, target, anchor, child.content or target), pos + 2
        if is_attachment(target):
            return None, pos + 2
        return Link(LinkKind.MARKDOWN, target, anchor, ""), pos + 2
    if child.type == "link_close":
        return None, cursor
    return None, cursor


def _text_until_close(children: Sequence[Token | LinkChild], start: int) -> str:
    parts: list[str] = []
    for child in children[start:]:
        if child.type == "link_close":
            break
        parts.append(child.content)
    return "".join(parts).strip()


def local_target(href: str) -> tuple[str, str] | None:
    """(path, anchor) of a link into the vault, URL-decoded; None for URLs and same-note anchors."""
    if not href or href.startswith("#"):
        return None
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None  # http:, mailto:, obsidian:, file: ... are not note links
    path = unquote(parts.path)
    _, _, ext = posixpath.basename(path).rpartition(".")
    if "." in posixpath.basename(path) and f".{ext.lower()}" not in NOTE_EXTS and ext.lower() not in ATTACHMENT_EXTS:
        return None  # a link to a .py or .txt file is not a note link
    return path, unquote(parts.fragment)


def _trim(line: str) -> str:
    return line if len(line) <= MAX_CONTEXT else line[: MAX_CONTEXT - 1] + "…"


_CODE = re.compile(r"(^|\n)(```|~~~)[^\n]*\n.*?(\n\2[^\n]*(?=\n|$)|$)|(`+)[^`].*?\4", re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)[^`].*?\1", re.DOTALL)
_WIKI_ONLY = re.compile(r"!?\[\[(?P<wiki>[^\[\]\n]+?)\]\](?P<text>)")
_SYNTAX = re.compile(
    r"!?\[\[(?P<wiki>[^\[\]\n]+?)\]\]"
    r"|!?\[(?P<text>[^\[\]\n]*)\]\((?:<[^>\n]*>|[^()\s]*)(?:\s+\"[^\"\n]*\")?\)"
)


def labelled_text(text: str) -> str:
    """Text with link syntax replaced by what a reader sees (`[[a|b]]` -> `b`, `[t](x.md)` -> `t`).

    For prose shown to people (snippets, extractive answers); code keeps its brackets.
    A scanner rather than the parser: it runs on chunk text at search time and has to be cheap.
    """
    return rewrite_links(text, _label, markdown=True)


def rewrite_links(
    text: str, fn: Callable[[re.Match[str]], str], *, markdown: bool = False, parser: MarkdownIt | None = None
) -> str:
    """Replace each `[[wikilink]]` / `![[embed]]` (and with `markdown`, each `[t](x)`) outside code by `fn(match)`.

    The match has groups `wiki` (inside the brackets) or `text`, and starts with "!" for an embed.
    Code is found by a scanner (fences, code spans); with a `parser`, code blocks come from its
    tokens instead, which also knows indented code (slower: for whole notes, not snippets).
    """
    if "[" not in text:
        return text
    pattern = _SYNTAX if markdown else _WIKI_ONLY
    out: list[str] = []
    pos = 0
    for start, end in _code_ranges(text, parser):
        out.append(pattern.sub(fn, text[pos:start]))
        out.append(text[start:end])
        pos = end
    out.append(pattern.sub(fn, text[pos:]))
    return "".join(out)


def _code_ranges(text: str, parser: MarkdownIt | None) -> list[tuple[int, int]]:
    if parser is None:
        return [m.span() for m in _CODE.finditer(text)]
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    blocks = [
        (starts[t.map[0]], starts[min(t.map[1], len(starts) - 1)])
        for t in parser.parse(text)
        if t.type in ("fence", "code_block", "html_block") and t.map is not None
    ]
    out: list[tuple[int, int]] = []
    pos = 0
    for start, end in blocks + [(len(text), len(text))]:
        out.extend((pos + a, pos + b) for a, b in (m.span() for m in _CODE_SPAN.finditer(text[pos:start])))
        if start < end:
            out.append((start, end))
        pos = max(pos, end)
    return out


def _label(m: re.Match[str]) -> str:
    if m.group("wiki") is not None:
        return split_wikilink(m.group("wiki"))[2]
    return m.group("text") or ""
