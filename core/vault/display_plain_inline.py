"""The inline half of `core.vault.display_plain`: an inline token's children without markdown-it.

Read left to right as markdown-it reads them, so the first construct that starts at a
position wins: code spans, `[[wikilinks]]` and `![[embeds]]`, `[label](url)`,
`<https://…>`, footnote references `[^1]` to a definition in the chunk, Obsidian's
`==highlights==` (Cairn's own rule in `obsidian_md`: its markers vanish, its inside is read as
inline text), bare URLs and e-mail addresses (the GFM autolink plugin's rules, its matchers
loaded by `core.vault.gfm_autolinks`: where a URL starts, what ends it, off inside links), and
`*`/`_` emphasis runs of one or two that pair as CommonMark pairs them (its
markers vanish, as in display text). A bracket that opens none of these is text: the chunk defines no link
references (`display_plain` declines any `]:`). Anything else an inline rule might read
(escapes, entities, strike-through, emphasis runs of three or of other sizes) declines the chunk.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from core.vault.display_html import AUTOLINK, EMAIL, HTML_TAG, reference_key
from core.vault.display_plain_marks import ASCII_PUNCT, MARKS, MD_WHITESPACE
from core.vault.display_tokens import Decline, PlainToken
from core.vault.gfm_autolinks import find_bare_link, link_text
from core.vault.links import split_wikilink

_TEXT_DECLINE = re.compile(r"~~")  # text an inline rule could read: strike-through
_WIKI_STOP = re.compile(r"\]\]|[\[\n]")
# `[label](dest "title")`: a label over lines, a destination with one level of balanced parentheses
# (markdown-it allows 32), a quoted title after a space and a destination: shapes markdown-it surely reads as a link.
_LINK = re.compile(r"""!?\[([^\[\]]*)\]\(((?:[^\s()<>\\]|\([^\s()<>\\]*\))*)(?:(?<!\()[ ]+"[^"\\\n]*"|(?<!\()[ ]+'[^'\\\n]*')?[ ]*\)""")
_BAD_SCHEME = re.compile(r"(?:javascript|vbscript|data):", re.IGNORECASE)
_AUTOLINK = re.compile(r"<(https?://[^<>\x00-\x20\\%]*)>")
_WIKI_LABEL_MARKUP = re.compile(r"[*_=~`<&$]")  # display_text parses such a label as markdown
_TRIGGERS = frozenset("`[!*_\n<=:@w$\\&")
_LINK_OPEN = re.compile(r"<a[>\s]", re.IGNORECASE)  # markdown-it's isLinkOpen / isLinkClose
_LINK_CLOSE = re.compile(r"</a\s*>", re.IGNORECASE)


class Footnotes:
    """The chunk's footnote definitions and the numbers references gave them, in reading order."""

    def __init__(self, labels: set[str]) -> None:
        self.labels = labels
        self.order: list[str] = []  # label of footnote id 0, 1, ...

    def ref(self, label: str) -> int:
        if label not in self.order:
            self.order.append(label)
        return self.order.index(label)

    def tail(self, tokens: list[PlainToken]) -> list[PlainToken]:
        """mdit-py-plugins' footnote tail: definitions leave their place; those referenced follow, by number."""
        bodies: dict[str, list[PlainToken]] = {}
        out: list[PlainToken] = []
        label: str | None = None
        for tok in tokens:
            if tok.type == "footnote_reference_open":
                label = tok.meta["label"]
                bodies[label] = []
            elif tok.type == "footnote_reference_close":
                label = None
            elif label is not None:
                bodies[label].append(tok)
            else:
                out.append(tok)
        if self.order:
            out.append(PlainToken("footnote_block_open"))
            for n, name in enumerate(self.order):
                out += [PlainToken("footnote_open", meta={"id": n, "label": name}), *bodies[name], PlainToken("footnote_close")]
            out.append(PlainToken("footnote_block_close"))
        return out


class InlineScan:
    """One inline token's children, as far as display text reads them (emphasis markers vanish)."""

    def __init__(self, src: str, notes: Footnotes, refs: frozenset[str] = frozenset()) -> None:
        self.src = src
        self.notes = notes
        self.refs = refs  # the keys of the chunk's link reference definitions
        self.out: list[PlainToken] = []
        self.in_label = False
        self.link_level = 0  # `<a …>` less `</a>` tags (may be negative); with a label's one, over 0 the GFM autolinks are off
        self.text_from = 0  # where the text since the last construct starts (markdown-it's `pending`)
        self.back = 0  # characters of that text a construct took back (a URL's scheme, an address's name)
        self._rules: dict[str, Callable[[int, int, list[PlainToken]], int | None]] = {
            "\n": self._softbreak, "`": self._code, "[": self._bracket, "!": self._bang,
            "*": self._emphasis, "_": self._emphasis, "<": self._autolink, "=": self._highlight,
            ":": self._bare_link, "@": self._bare_link, "w": self._bare_link, "$": self._mark, "\\": self._mark, "&": self._mark,
        }  # fmt: skip

    def run(self) -> list[PlainToken]:
        if "^[" in self.src:
            raise Decline  # an inline footnote
        self.scan(0, len(self.src))
        return self.out

    def scan(self, pos: int, end: int) -> None:
        """`src[pos:end]` into `out`; its emphasis markers must pair up within it."""
        src = self.src
        opened: list[PlainToken] = []  # emphasis openers not closed yet: their markers' tokens, hidden
        text_from = pos
        while pos < end:
            if src[pos] in _TRIGGERS:
                mark = len(self.out)
                self.text_from, self.back = text_from, 0
                taken = self._rules[src[pos]](pos, end, opened)
                back, self.back = self.back, 0  # read at once: a highlight's inside is scanned in the call
                if taken is not None:
                    self._text(text_from, pos - back, mark)
                    pos = text_from = taken
                    continue
            pos += 1
        self._text(text_from, end, len(self.out))
        for tok in opened:
            tok.type = "text"  # an opener nothing closed is text, as in CommonMark

    def _text(self, start: int, end: int, at: int) -> None:
        """The text between constructs, put before the tokens the construct after it added."""
        if start < end:
            piece = self.src[start:end]
            if _TEXT_DECLINE.search(piece):
                raise Decline
            self.out.insert(at, PlainToken("text", piece))

    def _softbreak(self, pos: int, end: int, opened: list[PlainToken]) -> int:
        self.out.append(PlainToken("softbreak"))
        return pos + 1

    def _code(self, pos: int, end: int, opened: list[PlainToken]) -> int:
        src = self.src
        run_end = pos
        while run_end < end and src[run_end] == "`":
            run_end += 1
        ticks = src[pos:run_end]
        close = self._closing_ticks(ticks, run_end, end)
        if close < 0:
            if len(ticks) > 2:
                raise Decline  # display text reads a literal run of three as code: left to markdown-it
            self.out.append(PlainToken("text", ticks))  # an unmatched run is literal text, all of it
            return run_end
        content = src[run_end:close].replace("\n", " ")
        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
            content = content[1:-1]
        self.out.append(PlainToken("code_inline", content))
        return close + len(ticks)

    def _bang(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        if self.src.startswith("![[", pos):
            return self._wikilink(pos, end)
        if self.src.startswith("![", pos) and self._label_then_paren(pos + 1, end):
            return self._image(pos, end)
        if self.refs and self.src.startswith("![", pos):
            raise Decline  # maybe a reference image
        return None  # a `!` as text

    def _bracket(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        src = self.src
        if src.startswith("[[", pos):
            return self._wikilink(pos, end)
        if self._label_then_paren(pos, end):
            return self._link(pos, end)
        taken = self._reference(pos, end) if self.refs else None
        if taken is None and src.startswith("[^", pos) and self.notes.labels:
            return self._footnote_ref(pos, end)
        return taken  # None: a bracket that opens nothing is text

    def _reference(self, pos: int, end: int) -> int | None:
        """`[text][label]`, `[label][]` or `[label]` whose label the chunk defines (markdown-it's link rule), else None."""
        src = self.src
        close = self._label_end(pos, end)
        if close < 0:
            return None
        label, stop = src[pos + 1 : close], close + 1
        second = self._label_end(stop, end) if src.startswith("[", stop) else -1
        if second >= 0:
            label, stop = src[stop + 1 : second] or label, second + 1
        if reference_key(label) not in self.refs:
            return None
        self.in_label = True
        self.scan(pos + 1, close)
        self.in_label = False
        return stop

    def _closing_ticks(self, ticks: str, search: int, end: int) -> int:
        """Where the next run of exactly as many backticks starts (a code span's end), or -1."""
        src = self.src
        while True:
            close = src.find(ticks, search, end)
            if close < 0:
                return -1
            after = stop = close + len(ticks)
            while stop < len(src) and src[stop] == "`":
                stop += 1
            if stop > end:
                return -1  # a run crossing the span's end closes nothing, and markdown-it looks no further
            if stop == after:
                return close
            search = stop

    def _label_end(self, pos: int, end: int) -> int:
        """The `]` closing the label opened at `pos`, as markdown-it finds it (code spans skipped), or -1.

        Declined when another token could hold a `]`: a bracket, HTML or an autolink, an
        escape, a highlight.
        """
        src = self.src
        if src.find("]", pos + 1, end) < 0:
            return -1
        i = pos + 1
        while i < end and src[i] != "]":
            if src[i] in "[<\\$" or src.startswith("==", i):
                raise Decline
            if src[i] != "`":
                i += 1
                continue
            run_end = i
            while run_end < end and src[run_end] == "`":
                run_end += 1
            close = self._closing_ticks(src[i:run_end], run_end, end)
            i = run_end if close < 0 else close + run_end - i
        return i if i < end else -1

    def _label_then_paren(self, pos: int, end: int) -> bool:
        """Whether the `[` at `pos` closes with `](`, as a link or image would (declined when unsure where it closes)."""
        close = self._label_end(pos, end)
        return close >= 0 and self.src.startswith("(", close + 1)

    def _link(self, pos: int, end: int) -> int:
        m = _LINK.match(self.src, pos, end)
        if m is None or _BAD_SCHEME.match(m.group(2)) or m.end(1) != self._label_end(pos, end):
            raise Decline  # a destination with spaces, a title, brackets: markdown-it decides
        self.in_label = True
        self.scan(m.start(1), m.end(1))
        self.in_label = False
        return m.end()

    def _image(self, pos: int, end: int) -> int:
        """An image: display text reads its label as written (or nothing, for a file name)."""
        m = _LINK.match(self.src, pos, end)
        if m is None or _BAD_SCHEME.match(m.group(2)) or m.end(1) != self._label_end(pos + 1, end):
            raise Decline
        self.out.append(PlainToken("image", m.group(1)))
        return m.end()

    def _footnote_ref(self, pos: int, end: int) -> int | None:
        close = self.src.find("]", pos + 2, end)
        label = self.src[pos + 2 : close] if close > pos + 2 else ""
        if not label or " " in label or "\n" in label or label not in self.notes.labels:
            return None
        self.out.append(PlainToken("footnote_ref", meta={"id": self.notes.ref(label)}))
        return close + 1

    def _wikilink(self, pos: int, end: int) -> int:
        src = self.src
        embed = src[pos] == "!"
        start = pos + (3 if embed else 2)
        found = _WIKI_STOP.search(src, start, end)
        if found is None or found.group() != "]]" or found.start() == start:
            raise Decline
        inner = src[start : found.start()]
        _, anchor, label = split_wikilink(inner)
        if not embed and _WIKI_LABEL_MARKUP.search(label) and ("|" in inner or not anchor.startswith("^")):
            # display text parses such a label on its own (`wikilink_text`): its tokens stand for the link
            children = InlineScan(label, Footnotes(set())).run()
            if any(tok.type == "html_inline" for tok in children):
                raise Decline  # an inline <script> would hide text past the label
            self.out += children
        else:
            self.out.append(PlainToken("wikilink", inner, meta={"embed": embed}))
        return found.end()

    def _autolink(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        """`<https://…>` (its text as markdown-it shows it), inline HTML (shown as nothing), or a `<` that is text.

        An HTML link (`<a id="x"></a>`) turns the GFM autolinks off until it closes; text
        that one could read declines anyway (outside a link label), so it reads alike.
        """
        src = self.src
        close = src.find(">", pos + 1, end)
        inside = src[pos + 1 : close] if close > 0 and "<" not in src[pos + 1 : close] else None
        if inside is None or not (AUTOLINK.search(inside) or EMAIL.search(inside)):
            tag = HTML_TAG.match(src, pos, end) if pos + 2 < end and (src[pos + 1] in "!?/" or src[pos + 1].isascii() and src[pos + 1].isalpha()) else None
            if tag is None:
                return None  # a `<` as text
            self.out.append(PlainToken("html_inline", tag.group()))
            self.link_level += 1 if _LINK_OPEN.match(tag.group()) else -1 if _LINK_CLOSE.match(tag.group()) else 0
            return tag.end()
        m = _AUTOLINK.match(src, pos, end)
        if m is None or not m.group(1).isascii() or "xn--" in m.group(1).lower():
            raise Decline  # an e-mail address, another scheme, a name to decode
        self.out.append(PlainToken("text", link_text(m.group(1))))
        return m.end()

    def _bare_link(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        """A bare URL or address at its `:`, `@` or `w` (`core.vault.gfm_autolinks`), or text.

        Off inside a link's label and between `<a …>` and `</a>`; what lies before the trigger
        (a scheme, an address's name) is taken back from the text before it.
        """
        if self.link_level + self.in_label > 0:
            return None
        found = find_bare_link(self.src, pos, end, self.text_from)
        if found is None:
            return None
        start, stop = found
        self.out.append(PlainToken("text", link_text(self.src[start:stop])))
        self.back = pos - start
        return stop

    def _mark(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        """An escape, an entity or `$math$` (`core.vault.display_plain_marks`), or text."""
        found = MARKS[self.src[pos]](self.src, pos, end)
        if found is None:
            return None
        self.out.append(found[0])
        return found[1]

    def _highlight(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        """`==text==` as `obsidian_md`'s rule reads it: the inside up to the next `==`, or a `=` that is text.

        markdown-it gives the inside a delimiter scope of its own (`mark_open`), so its
        emphasis pairs within it, as a link label's does.
        """
        src = self.src
        if not src.startswith("==", pos) or pos + 2 >= end or src[pos + 2] in " \t\n=":
            return None
        close = src.find("==", pos + 2, end)
        if close < 0 or src[close - 1] in " \t\n":
            return None
        self.scan(pos + 2, close)
        return close + 2

    def _emphasis(self, pos: int, end: int, opened: list[PlainToken]) -> int | None:
        """A `*`/`_` run as CommonMark pairs it (its markers vanish), or one that is text.

        Its flanking as markdown-it's `scanDelims` judges it; a run that closes pairs with the
        run of its marker and size left open last, one that can only close with none of its
        marker open is text, and so is an opener nothing closes (`scan` shows it at the end).
        Anything else CommonMark's pairing might do (a run of three, an opener deeper down,
        sizes that differ) declines.
        """
        src = self.src
        c = src[pos]
        if pos > 0 and src[pos - 1] == c:
            return None  # the rest of a run already read as text
        run_end = pos
        while run_end < end and src[run_end] == c:
            run_end += 1
        before = src[pos - 1] if pos > 0 else " "  # markdown-it's neighbours: the source's, a space past the end
        after = src[run_end] if run_end < end else " "
        can_open, can_close = _flanking(c, before, after)
        if not (can_open or can_close):
            return None  # `snake_case`, `a * b`: neither opens nor closes
        size = run_end - pos
        if size > 2:
            raise Decline
        if can_close and opened and opened[-1].content == c * size:
            opened.pop()
        elif any(tok.content[0] == c for tok in opened):
            raise Decline  # it would pair with an opener under another, or of another size
        elif can_open:
            opened.append(PlainToken("delim", c * size))  # shown only if nothing closes it
            self.out.append(opened[-1])
        else:
            return None  # it can only close and nothing of its marker is open: text
        return run_end


def _flanking(marker: str, before: str, after: str) -> tuple[bool, bool]:
    """markdown-it's `scanDelims` verdict (can open, can close) on a run between `before` and `after`."""
    last_space, next_space = before in MD_WHITESPACE, after in MD_WHITESPACE
    last_punct, next_punct = before in ASCII_PUNCT or _punct(before), after in ASCII_PUNCT or _punct(after)
    left = not next_space and (not next_punct or last_space or last_punct)
    right = not last_space and (not last_punct or next_space or next_punct)
    if marker == "*":
        return left, right
    return left and (not right or last_punct), right and (not left or next_punct)


def _punct(ch: str) -> bool:
    """markdown-it's isPunctChar: Unicode punctuation and symbols."""
    return unicodedata.category(ch).startswith(("P", "S"))
