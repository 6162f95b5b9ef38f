"""Obsidian's flavour of markdown as markdown-it tokens: the one parser every rendering reads.

CommonMark with tables, strikethrough, task lists, footnotes (also `^[inline]`), `$math$`,
front matter, bare URLs as links and `[[wikilinks]]`, plus what no plugin covers: callouts (`> [!tip]+ Title`,
nested, folding), highlights (`==x==`), `%%comments%%` and `^block-ids` (both hidden, as
Obsidian hides them). Display text (`core.vault.display_text`) and the Preview's HTML
(`core.vault.render_html`) both walk these tokens, so they agree on what a note says.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.vault.links import wikilink_plugin

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

    from core.vault.display_tokens import PlainToken

#: `[!type]`, optional fold sign, optional title, on a callout's first line.
CALLOUT_LINE = re.compile(r"^\[!([^\]\s]+)\]([+-]?)[ \t]*(.*)$")
#: Obsidian hides `^block-id` at a line's end, or alone on a line after a list or table.
_BLOCK_ID = re.compile(r"(?:[ \t]+|^)\^[A-Za-z0-9-]+[ \t]*$", re.MULTILINE)
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)", re.DOTALL)
#: Code is left alone by the source clean-up: fences and code spans.
_CODE = re.compile(r"(?:^|\n)[ \t]{0,3}(```+|~~~+)[^\n]*\n.*?(?:\n[ \t]{0,3}\1[^\n]*(?=\n|$)|\Z)|(`+)[^`].*?\2", re.DOTALL)
_BAD_SCHEME = re.compile(r"^(?:javascript|vbscript|data):", re.IGNORECASE)
_local = threading.local()

#: Callout kinds Obsidian knows, with their aliases, as the word shown and a symbol.
CALLOUT_KINDS: dict[str, tuple[str, str]] = {
    "note": ("Note", "✎"), "abstract": ("Abstract", "☰"), "summary": ("Summary", "☰"), "tldr": ("TL;DR", "☰"),
    "info": ("Info", "ℹ"), "todo": ("To do", "☐"), "tip": ("Tip", "✦"), "hint": ("Hint", "✦"),
    "important": ("Important", "❗"), "success": ("Success", "✔"), "check": ("Check", "✔"), "done": ("Done", "✔"),
    "question": ("Question", "?"), "help": ("Help", "?"), "faq": ("FAQ", "?"), "warning": ("Warning", "⚠"),
    "caution": ("Caution", "⚠"), "attention": ("Attention", "⚠"), "failure": ("Failure", "✘"), "fail": ("Fail", "✘"),
    "missing": ("Missing", "✘"), "danger": ("Danger", "⚡"), "error": ("Error", "⚡"), "bug": ("Bug", "✱"),
    "example": ("Example", "▤"), "quote": ("Quote", "❝"), "cite": ("Cite", "❝"),
}


@dataclass(frozen=True, slots=True)
class Callout:
    """A callout's kind (lower case, as written), its shown title and fold state ("", "+" or "-")."""

    kind: str
    title: str
    fold: str

    @property
    def label(self) -> str:
        """The kind as a word: "Tip", or the unknown kind capitalised ("Released")."""
        known = CALLOUT_KINDS.get(self.kind)
        return known[0] if known else self.kind.replace("-", " ").capitalize()

    @property
    def symbol(self) -> str:
        known = CALLOUT_KINDS.get(self.kind)
        return known[1] if known else "▍"


def obsidian_parser() -> MarkdownIt:
    """This thread's parser (built once per thread: building one costs ~1 ms, parsing reuses it)."""
    md: MarkdownIt | None = getattr(_local, "md", None)
    if md is None:
        md = _local.md = _new_parser()
    return md


def _new_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin
    from mdit_py_plugins.gfm_autolink import gfm_autolink_plugin

    md = MarkdownIt("commonmark", {"html": True, "tasklists": True})
    md.enable(["table", "strikethrough"])
    md.use(front_matter_plugin).use(footnote_plugin, inline=True).use(dollarmath_plugin, allow_space=False, allow_digits=False)
    md.use(wikilink_plugin).use(gfm_autolink_plugin)  # bare URLs are links, as in Obsidian
    md.validateLink = _validate_link  # type: ignore[method-assign]
    md.inline.ruler.before("emphasis", "highlight", _highlight_rule)
    md.core.ruler.after("block", "callouts", _callouts)
    return md


def _validate_link(url: str) -> bool:
    """markdown-it's check, but a vault's own files (`file:`) may be linked: scripts and data still may not."""
    return _BAD_SCHEME.match(url.strip()) is None


def clean_source(text: str) -> str:
    """The markdown without what Obsidian never shows: `%%comments%%` and `^block-ids` (code untouched)."""
    if "%%" not in text and "^" not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in _CODE.finditer(text):
        out.append(_hide(text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_hide(text[pos:]))
    return "".join(out)


def _hide(text: str) -> str:
    return _BLOCK_ID.sub("", _COMMENT.sub("", text)) if text else text


def parse(text: str) -> list[Token]:
    """The tokens of `text` (comments and block ids already removed)."""
    return obsidian_parser().parse(clean_source(text))


# -- callouts -----------------------------------------------------------------------------


def _callouts(state: StateCore) -> None:
    """Blockquotes whose first line is `[!kind]` become `callout_open`/`callout_close` with a title token."""
    tokens = state.tokens
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "blockquote_open" and i + 2 < len(tokens) and tokens[i + 1].type == "paragraph_open":
            inline = tokens[i + 2]
            first, _, rest = inline.content.partition("\n")
            m = CALLOUT_LINE.match(first.strip())
            if m is not None:
                _make_callout(state, i, m, rest)
        i += 1


def _make_callout(state: StateCore, i: int, m: re.Match[str], rest: str) -> None:
    from markdown_it.token import Token

    tokens = state.tokens
    opener = tokens[i]
    kind, fold, title = m.group(1).lower(), m.group(2), m.group(3).strip()
    callout = Callout(kind, title, fold)
    if title.casefold() == callout.label.casefold():  # `> [!tip] Tip` says it once
        title = ""
        callout = Callout(kind, "", fold)
    opener.type, opener.tag = "callout_open", "div"
    opener.meta = {"callout": callout}
    close = matching_close(tokens, i)
    if close is not None:
        tokens[close].type, tokens[close].tag = "callout_close", "div"
    title_tokens: list[Token] = []
    if title:
        title_inline = Token("inline", "", 0, content=title, level=opener.level + 1, map=opener.map, children=[])
        title_tokens = [Token("callout_title_open", "p", 1, level=opener.level + 1), title_inline, Token("callout_title_close", "p", -1)]
    if rest.strip():
        tokens[i + 2].content = rest
        tokens[i + 1 : i + 1] = title_tokens
    else:  # the first paragraph was only the `[!kind]` line
        tokens[i + 1 : i + 4] = title_tokens


def matching_close(tokens: Sequence[Token] | Sequence[PlainToken], i: int) -> int | None:
    """The index of the token closing the quote or callout opened at `i` (markdown-it's tokens or the plain reader's)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].type in ("blockquote_open", "callout_open"):
            depth += 1
        elif tokens[j].type in ("blockquote_close", "callout_close"):
            depth -= 1
            if depth == 0:
                return j
    return None


# -- highlights ---------------------------------------------------------------------------


def _highlight_rule(state: StateInline, silent: bool) -> bool:
    """`==text==` as `mark_open`, the text's own inline tokens, `mark_close` (as Obsidian highlights)."""
    src, start = state.src, state.pos
    if not src.startswith("==", start) or start + 2 >= state.posMax or src[start + 2] in " \t\n=":
        return False
    end = src.find("==", start + 2, state.posMax)
    if end < 0 or src[end - 1] in " \t\n":
        return False
    if not silent:
        state.push("mark_open", "mark", 1)
        old_max = state.posMax
        state.pos, state.posMax = start + 2, end
        state.md.inline.tokenize(state)
        state.posMax = old_max
        state.push("mark_close", "mark", -1)
    state.pos = end + 2
    return True
