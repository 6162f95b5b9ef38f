"""A note's markdown as safe HTML for the Preview (Qt's rich text), read with the one Obsidian parser.

Callouts become titled boxes (their kind as a symbol and a word, foldable ones shown open),
tables real tables, `==highlights==` marked, tasks ☐/☑, math its source, footnotes numbered;
comments and block ids are hidden as in Obsidian. Raw HTML in the note is kept only as far
as it is harmless: nh3 (the Ammonia sanitiser) drops scripts, styles, event handlers and
unknown tags, and images load only from the vault (a `file:` or relative address), never
from the web. Long lines of code wrap, so the Preview needs no horizontal scroll bar.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.vault.display_text import wikilink_text
from core.vault.obsidian_md import Callout, obsidian_parser, parse

if TYPE_CHECKING:
    from markdown_it.renderer import RendererHTML
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

ALLOWED_TAGS = frozenset(
    "a b blockquote br code del div em h1 h2 h3 h4 h5 h6 hr i img kbd li ol p pre s small span strong sub sup "
    "table tbody td th thead tr u ul".split()
)
_BOX = {"width", "border", "cellspacing", "cellpadding", "bgcolor", "style", "align"}
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "width", "height", "title"},
    "table": _BOX,
    "td": _BOX | {"colspan", "rowspan", "valign"},
    "th": _BOX | {"colspan", "rowspan"},
    "span": {"style"},
    "p": {"style"},
    "pre": {"style"},
    "ul": {"style"},
    "div": {"style"},
}
#: CSS a note's own HTML may set: colours and text style; nothing that loads (no `url()`).
ALLOWED_STYLES = frozenset(
    "background-color color border-color border-style border-width white-space font-weight font-style list-style-type".split()
)
URL_SCHEMES = frozenset({"http", "https", "mailto", "file", "cairn-note"})
_SOURCELESS_IMAGE = re.compile(r"<img(?![^>]*\ssrc=)[^>]*>")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


@dataclass(frozen=True, slots=True)
class CalloutColours:
    """A callout kind's border and background, for light or dark backgrounds."""

    border: str
    light: str
    dark: str


_BLUE = CalloutColours("#4a86e8", "#eaf1fd", "#1f2a3a")
_GREEN = CalloutColours("#2e9e5b", "#e8f6ee", "#1c3026")
_ORANGE = CalloutColours("#e69138", "#fdf1e4", "#3a2c1c")
_RED = CalloutColours("#d9534f", "#fbe9e8", "#3a1f1f")
_PURPLE = CalloutColours("#8e6cc9", "#f1ecfa", "#2c2438")
_GREY = CalloutColours("#8a8a8a", "#f1f1f1", "#2a2a2a")
_COLOURS: dict[str, CalloutColours] = {
    **dict.fromkeys(("note", "info", "todo", "abstract", "summary", "tldr"), _BLUE),
    **dict.fromkeys(("tip", "hint", "important", "success", "check", "done"), _GREEN),
    **dict.fromkeys(("warning", "caution", "attention", "question", "help", "faq"), _ORANGE),
    **dict.fromkeys(("failure", "fail", "missing", "danger", "error", "bug"), _RED),
    **dict.fromkeys(("example",), _PURPLE),
    **dict.fromkeys(("quote", "cite"), _GREY),
}


def callout_colours(kind: str) -> CalloutColours:
    """Obsidian's colour family for a kind; unknown (custom) kinds are blue, as Obsidian draws them."""
    return _COLOURS.get(kind, _BLUE)


def render_html(markdown: str, *, dark: bool = False) -> str:
    """`markdown` as sanitised HTML for a QTextDocument (`dark` picks the callouts' backgrounds)."""
    md = obsidian_parser()
    env: dict[str, Any] = {"cairn_dark": dark}
    body = _Renderer.render(md.renderer, parse(markdown), md.options, env)  # type: ignore[arg-type]
    return sanitise(body)


def sanitise(fragment: str) -> str:
    """HTML with only harmless tags, attributes, styles and addresses left; images only from the vault."""
    import nh3

    cleaned = nh3.clean(
        fragment,
        tags=set(ALLOWED_TAGS),
        attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES),
        filter_style_properties=set(ALLOWED_STYLES),
        attribute_filter=_keep_attribute,
        link_rel=None,
        strip_comments=True,
    )
    return _SOURCELESS_IMAGE.sub("", cleaned)  # a web image whose address was dropped


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    if tag == "img" and attribute == "src" and _SCHEME.match(value) and not value.lower().startswith("file:"):
        return None  # a web image would be a remote load (and a tracker): never fetched
    return value


def reflow(text: str) -> str:
    """A PDF page's text with its hard line breaks inside paragraphs as spaces (blank lines stay).

    The text keeps its length, so character positions into it (a hit's range) still hold.
    """
    return re.sub(r"(?<=\S)[ \t]*\n(?=[ \t]*\S)", lambda m: " " * len(m.group(0)), text)


# -- rendering rules ----------------------------------------------------------------------


class _Renderer:
    """markdown-it render rules for what Obsidian adds, called with the parser's own renderer."""

    @staticmethod
    def render(renderer: RendererHTML, tokens: Sequence[Token], options: OptionsDict, env: EnvType) -> str:
        out: list[str] = []
        for i, tok in enumerate(tokens):
            rule = _BLOCK_RULES.get(tok.type)
            if rule is not None:
                out.append(rule(tokens, i, env))
            elif tok.type == "inline" and i and tokens[i - 1].type == "callout_title_open":
                continue  # rendered as the callout's head
            elif tok.type == "inline":
                out.append(_inline(renderer, tok.children or [], options, env))
            elif tok.type in renderer.rules:
                out.append(renderer.rules[tok.type](tokens, i, options, env))
            else:
                out.append(renderer.renderToken(tokens, i, options, env))
        return "".join(out)


def _inline(renderer: RendererHTML, children: Sequence[Token], options: OptionsDict, env: EnvType) -> str:
    out: list[str] = []
    for i, tok in enumerate(children):
        rule = _INLINE_RULES.get(tok.type)
        if rule is not None:
            out.append(rule(children, i, env))
        elif tok.type == "image":
            out.append(_image(tok))
        elif tok.type in renderer.rules:
            out.append(renderer.rules[tok.type](children, i, options, env))
        else:
            out.append(renderer.renderToken(children, i, options, env))
    return "".join(out)


def _callout_open(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    callout: Callout = tokens[i].meta["callout"]
    colours = callout_colours(callout.kind)
    background = colours.dark if env.get("cairn_dark") else colours.light
    box = (
        f'<table width="100%" cellspacing="0" cellpadding="8" border="1" '
        f'style="border-color:{colours.border}; border-style:solid; background-color:{background}">'
        f'<tr><td style="border-color:{colours.border}">'
    )
    if callout.title:
        return box  # the title paragraph follows
    return box + _callout_head(callout, html.escape(callout.label))


def _callout_head(callout: Callout, title_html: str) -> str:
    colour = callout_colours(callout.kind).border
    fold = " ▾" if callout.fold else ""
    return f'<p style="color:{colour}; font-weight:bold">{html.escape(callout.symbol)} {title_html}{fold}</p>'


def _callout_title(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    opener = next(t for t in reversed(tokens[:i]) if t.type == "callout_open")
    callout: Callout = opener.meta["callout"]
    md = obsidian_parser()
    title = _inline(md.renderer, tokens[i + 1].children or [], md.options, env)  # type: ignore[arg-type]
    return _callout_head(callout, title)


def _list_item(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    checked = tokens[i].meta.get("checked") if tokens[i].meta else None
    if checked is None:
        return "<li>"
    return "<li>" + ("☑ " if checked else "☐ ")


def _bullet_list(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    if "contains-task-list" in str(tokens[i].attrGet("class") or ""):
        return '<ul style="list-style-type:none">\n'  # the ☐/☑ is the bullet, as in Obsidian
    return "<ul>\n"


def _fence(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    code = html.escape(tokens[i].content.rstrip("\n"))
    return f'<pre style="white-space:pre-wrap">{code}</pre>\n'


def _math_block(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    return f'<pre style="white-space:pre-wrap">$${html.escape(tokens[i].content.strip())}$$</pre>\n'


def _table(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    return '<table width="100%" border="1" cellspacing="0" cellpadding="4">\n'


def _image(tok: Token) -> str:
    src = str(tok.attrGet("src") or "")
    alt = tok.content
    if _SCHEME.match(src) and not src.lower().startswith("file:"):
        return html.escape(f"🖼 {alt}" if alt else "🖼") + f' (<a href="{html.escape(src)}">web image, not loaded</a>)'
    return f'<img src="{html.escape(src)}" alt="{html.escape(alt)}">'


def _wikilink(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    return html.escape(wikilink_text(tokens[i].content, bool(tokens[i].meta.get("embed"))))


def _footnote_ref(tokens: Sequence[Token], i: int, env: EnvType) -> str:
    return f"<sup>[{int(tokens[i].meta.get('id', 0)) + 1}]</sup>"


_BLOCK_RULES = {
    "callout_open": _callout_open,
    "callout_close": lambda tokens, i, env: "</td></tr></table>\n",
    "callout_title_open": _callout_title,
    "callout_title_close": lambda tokens, i, env: "",
    "list_item_open": _list_item,
    "bullet_list_open": _bullet_list,
    "fence": _fence,
    "code_block": _fence,
    "math_block": _math_block,
    "table_open": _table,
    "footnote_block_open": lambda tokens, i, env: '<hr/>\n<ol style="font-size:small">\n',
    "footnote_block_close": lambda tokens, i, env: "</ol>\n",
    "footnote_open": lambda tokens, i, env: "<li>",
    "footnote_close": lambda tokens, i, env: "</li>\n",
    "front_matter": lambda tokens, i, env: "",
    "footnote_anchor": lambda tokens, i, env: "",
}
_INLINE_RULES = {
    "mark_open": lambda tokens, i, env: '<span style="background-color:#fff3a3; color:#000000">',
    "mark_close": lambda tokens, i, env: "</span>",
    "math_inline": lambda tokens, i, env: f"<code>${html.escape(tokens[i].content)}$</code>",
    "wikilink": _wikilink,
    "footnote_ref": _footnote_ref,
    "footnote_anchor": lambda tokens, i, env: "",
}
