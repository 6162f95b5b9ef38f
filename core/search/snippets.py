"""Short excerpts of a chunk around the words that matched, with the matches marked.

Matches are marked `**like this**` (Markdown bold), which the CLI prints as is
and the app turns into highlighting. The window is cut from the chunk's display text
(`core.vault.display_text`: callouts, tables, embeds and HTML as a person reads them), and the
matches are found in that very text, so the highlights land on the words shown.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from core.index.analysis import DEFAULT_LANGUAGE, Stemmer, phrase_spans
from core.vault.display_text import code_spans, one_line

DEFAULT_WIDTH = 240
_CODE_SLACK = 40  # characters a window may grow by to keep a code span whole
MARK_OPEN = "**"
MARK_CLOSE = "**"


def make_snippet(
    text: str,
    stems: Collection[str],
    stemmer: Stemmer,
    width: int = DEFAULT_WIDTH,
    lang: str | None = None,
    phrases: Sequence[str] = (),
) -> str:
    """The `width`-character window with the most distinct matched stems.

    `lang` is the chunk's language: its words are stemmed as the index stemmed them.
    A quoted phrase the chunk holds is marked whole, stop words included
    ("**state of the art**"), and counts as one more distinct match.
    """
    # What the note shows, not its syntax (`[[a|b]]` -> "b", `> [!tip]` -> "Tip:"): the highlights
    # are found in this very text, so they stay right.
    flat = one_line(text)
    if not flat:
        return ""
    spans = []
    if stems:
        spans = [span for span in stemmer.spans(flat, lang) if span[2] in stems]
    for phrase in phrases:
        spans += [(s, e, f'"{phrase}"') for s, e in phrase_spans(flat, phrase, lang or DEFAULT_LANGUAGE)]
    spans.sort()
    if not spans:
        return _clip(flat, 0, width)
    best_start, best_count = 0, -1
    for i, (start, _, _) in enumerate(spans):
        distinct = {t for s, _, t in spans[i:] if s < start + width}
        if len(distinct) > best_count:
            best_start, best_count = start, len(distinct)
    begin = max(0, best_start - width // 4)
    if begin > 0:
        space = flat.rfind(" ", 0, begin)
        begin = space + 1 if space != -1 and begin - space < 30 else begin
    end = min(len(flat), begin + width)
    begin, end = _whole_code(flat, begin, end)
    out: list[str] = []
    pos = begin
    for s, e in _merged(spans):
        if s < pos or e > end:
            continue
        out.append(flat[pos:s])
        out.append(f"{MARK_OPEN}{flat[s:e]}{MARK_CLOSE}")
        pos = e
    out.append(flat[pos:end])
    prefix = "…" if begin > 0 else ""
    suffix = "…" if end < len(flat) else ""
    return prefix + "".join(out) + suffix


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """Overlapping or touching spans as one: CJK bigrams 保存, 存并, 并退 mark 保存并退 once."""
    out: list[tuple[int, int]] = []
    for s, e, _ in spans:
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _clip(flat: str, start: int, width: int) -> str:
    if len(flat) <= width:
        return flat
    cut = flat.rfind(" ", start, start + width)
    cut = cut if cut > start + width // 2 else start + width
    start, cut = _whole_code(flat, start, cut)
    return flat[start:cut] + "…"


def _whole_code(flat: str, begin: int, end: int) -> tuple[int, int]:
    """The window moved off the middle of a code span: half a span would show stray backticks
    and read code as prose. A short cut-off part is taken in whole; a long one is left out."""
    if "`" not in flat:
        return begin, end
    for m in code_spans(flat):
        s, e = m.span()
        if s < begin < e:
            begin = s if begin - s <= _CODE_SLACK else e
        if s < end < e:
            end = e if e - end <= _CODE_SLACK else s
    return begin, max(begin, end)
