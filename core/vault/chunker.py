"""Split a note into heading-aware chunks with exact byte ranges.

Blocks come from markdown-it-py's CommonMark tokens, so a `#` inside a code
fence is code, not a heading; a plainly written note gets the same blocks for less
from a line scanner (`core.vault.simple_blocks`). Every chunk remembers the byte
range it came from in the raw file, which is what citations and the preview point at.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

from core.base.models import Chunk
from core.vault.chunk_limits import ChunkLimits
from core.vault.plain_tags import TAG as _TAG
from core.vault.plain_tags import plain_tags
from core.vault.simple_blocks import simple_blocks
from core.vault.simple_note import InlineText, SimpleBlock, parse_inline

if TYPE_CHECKING:  # markdown-it loads with the first parser: a keyword search never parses markdown
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token

_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+")


@dataclass(frozen=True, slots=True)
class Block:
    """A top-level block of a note's body, where the chunker may cut."""

    start: int  # byte offsets into the raw file
    end: int
    heading_level: int  # 0 for a non-heading block
    heading_text: str


@dataclass(frozen=True, slots=True)
class ChunkedBody:
    """A note's body cut into chunks, with what the chunker learnt on the way (title, tags, link texts)."""

    chunks: tuple[Chunk, ...]
    first_h1: str | None
    inline_tags: tuple[str, ...]
    truncated: bool
    # The inline texts when the plain-note scanner read the note (links are read from them
    # without parsing its blocks again); None when markdown-it parsed it.
    inline: tuple[InlineText, ...] | None = None
    # When markdown-it parsed it: its inline tokens' texts (the link parser has the same block
    # rules, so links need no second block pass); None when the note defines link references.
    parsed_inline: tuple[InlineText, ...] | None = None
    # The scanner's link reference definitions (`[label]: url` lines): `[text][label]` in
    # `inline` is a link only with them (`links.extract_links` parses them for its inline pass).
    references: tuple[str, ...] = ()


def new_parser() -> MarkdownIt:
    """CommonMark with tables, whose inline pass runs only on the text a `#tag` can come from.

    The chunker reads blocks, headings' source text and the tags in inline text; only the
    tags need the inline pass, and it was ~35 % of parsing a note. Each inline token is
    parsed on its own anyway (with the note's link references), so parsing just those
    whose source could make a tag gives the same tags, and the same tokens for them.
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.core.ruler.at("inline", _tag_inline)
    return md


# A tag in an inline text node needs "#" and a letter in the source, perhaps with a backslash
# between them (`#\\_x` is the text "#_x"), or an entity making either: "#" only comes of
# `&#35;`, `&#x23;` or `&num;`, and a letter after a "#" written out needs "#&". A letter,
# digit, "/", "#" or "&" just before the "#" is literal text before it in the same text node,
# where `_TAG` refuses it ("_" is not: it may close emphasis), so URL fragments need no pass.
# The look-behind comes after the "#" so that the engine only stops at a "#" or "&".
_MAYBE_TAG = re.compile(r"#(?<!(?:[^\W_]|[/#&])#)\\?[^\W\d]|#&|&#(?:0*35|[xX]0*23);|&num;", re.UNICODE)


def _tag_inline(state: StateCore) -> None:
    """markdown-it's core "inline" rule, for the inline tokens whose source could hold a tag."""
    md, env = state.md, state.env
    for token in state.tokens:
        if token.type == "inline" and _MAYBE_TAG.search(token.content) is not None:
            if token.children is None:
                token.children = []
            md.inline.parse(token.content, md, env, token.children)


def chunk_markdown(
    raw: bytes, body_start: int, limits: ChunkLimits = ChunkLimits(), parser: MarkdownIt | None = None
) -> ChunkedBody:
    """Chunk the body of a note (everything from `body_start` on)."""
    body_bytes = raw[body_start:]
    text = body_bytes.decode("utf-8", "replace")
    line_starts = _line_starts(raw, body_start)
    simple = simple_blocks(text)
    parsed_inline = None
    if simple is None:
        env: dict[str, object] = {}
        tokens = (parser or new_parser()).parse(text, env)
        blocks, first_h1, tags = _blocks(tokens, line_starts, len(raw))
        if not env.get("references"):  # `[text][ref]` needs the note's definitions: links parse it whole
            parsed_inline = tuple(InlineText(t.content, t.map[0]) for t in tokens if t.type == "inline" and t.map is not None)
    else:
        blocks, first_h1, tags = _from_simple(*simple, line_starts, len(raw), parser)
    chunks: list[Chunk] = []
    stack: list[tuple[int, str]] = []
    pending: list[Block] = []

    headings_only: list[tuple[int, int, str]] = []

    def flush() -> None:
        if not pending:
            return
        if all(b.heading_level for b in pending):
            # A heading with no content of its own lives on in the heading path of what follows.
            headings_only.append((pending[0].start, pending[-1].end, _path(stack)))
        else:
            _emit(raw, pending[0].start, pending[-1].end, _path(stack), limits, chunks)
        pending.clear()

    has_content = False  # whether `pending` holds more than headings
    for block in blocks:
        if block.heading_level:
            flush()
            has_content = False
            while stack and stack[-1][0] >= block.heading_level:
                stack.pop()
            stack.append((block.heading_level, block.heading_text))
            pending.append(block)
            continue
        if has_content and not _within(raw, pending[0].start, block.end, limits.soft_chars):
            flush()
        pending.append(block)
        has_content = True
    flush()
    if not chunks:
        for start, end, path in headings_only:
            _emit(raw, start, end, path, limits, chunks)
    truncated = len(chunks) > limits.max_chunks
    kept = chunks[: limits.max_chunks]
    numbered = tuple(kept)  # numbered already: `_emit` gives each chunk its place in `chunks`
    inline, references = (None, ()) if simple is None else (tuple(simple.inline), tuple(simple.references))
    return ChunkedBody(numbered, first_h1, tags, truncated, inline, parsed_inline, references)


def chunk_text(raw: bytes, start: int, end: int) -> str:
    """The text of a byte range exactly as a chunk carries it (line endings normalised)."""
    text = raw[start:end].decode("utf-8", "replace")
    return _NEWLINE_TEXT.sub("\n", text) if "\r" in text else text


_NEWLINE_TEXT = re.compile(r"\r\n?")


def _blocks(tokens: list[Token], line_starts: list[int], size: int) -> tuple[list[Block], str | None, tuple[str, ...]]:
    blocks: list[Block] = []
    first_h1: str | None = None
    tags: dict[str, None] = {}  # ordered set: a note with 50,000 #tags made `in list` quadratic
    heading_level = 0
    for tok in tokens:
        if tok.type == "inline" and tok.children:
            _tags_of(tok.children, tags)
        if tok.level != 0 or tok.map is None or tok.nesting == -1:
            if tok.type == "inline" and heading_level and tok.level == 1:
                text = tok.content.strip()
                last = blocks[-1]
                blocks[-1] = Block(last.start, last.end, heading_level, text)
                if heading_level == 1 and first_h1 is None and text:
                    first_h1 = text
            continue
        start = _offset(line_starts, tok.map[0], size)
        end = _offset(line_starts, tok.map[1], size)
        heading_level = int(tok.tag[1]) if tok.type == "heading_open" else 0
        blocks.append(Block(start, end, heading_level, ""))
    return blocks, first_h1, tuple(tags)


def _from_simple(
    simple: list[SimpleBlock],
    inline: list[InlineText],
    references: list[str],
    line_starts: list[int],
    size: int,
    parser: MarkdownIt | None,
) -> tuple[list[Block], str | None, tuple[str, ...]]:
    """What `_blocks` makes of markdown-it's tokens, from a plainly written note's blocks.

    The note's reference definitions are read by markdown-it itself (those lines alone, a
    fraction of the note), so `[#x][label]` parses as the whole note's parse has it.
    """
    n = len(line_starts)  # `_offset` written out: two calls a block
    blocks = [
        Block(
            line_starts[b.start_line] if b.start_line < n else size,
            line_starts[b.end_line] if b.end_line < n else size,
            b.heading_level,
            b.heading_text.strip(),
        )
        for b in simple
    ]
    first_h1 = next((b.heading_text for b in blocks if b.heading_level == 1 and b.heading_text), None)
    maybe = maybe_tagged(inline)
    if not maybe:
        return blocks, first_h1, ()
    return blocks, first_h1, _inline_tags(maybe, references, parser)


def maybe_tagged(inline: list[InlineText]) -> list[InlineText]:
    """The inline texts `_MAYBE_TAG` finds something in, in order: one search over them all, joined.

    Joined by "\\n", which no match holds and the look-behind reads as it reads a text's start (no
    letter, "/", "#" or "&" before), so a text holds a match exactly when one of the joined text's
    matches lies in it (a match the search steps over overlaps one in the same text). One call for
    a note instead of one per paragraph, item and heading (rust-book: ~4,500 a pass).
    """
    contents = [text.content for text in inline]
    joined = "\n".join(contents)
    if "#" not in joined and "&" not in joined:
        return []
    starts = list(accumulate(map((1).__add__, map(len, contents)), initial=0))  # each text's start in `joined`
    hits = dict.fromkeys(bisect_right(starts, m.start()) - 1 for m in _MAYBE_TAG.finditer(joined))
    return [inline[k] for k in hits]


def _inline_tags(maybe: list[InlineText], references: list[str], parser: MarkdownIt | None) -> tuple[str, ...]:
    """The tags of these inline texts, in order: read plainly where `plain_tags` can, else by markdown-it."""
    found: list[list[str] | None] = [None] * len(maybe) if references else [plain_tags(text.content) for text in maybe]
    hard = [text for text, got in zip(maybe, found, strict=True) if got is None]
    parsed: list[Token] = []
    if hard:
        md = parser or new_parser()
        env: dict[str, object] = {}
        if references:
            md.parse("\n".join(references), env)
        parsed = parse_inline(md, hard, env)
    tags: dict[str, None] = {}
    next_parsed = iter(parsed)
    for got in found:
        if got is None:
            _tags_of(next(next_parsed).children or [], tags)
        else:
            tags.update(dict.fromkeys(got))
    return tuple(tags)


def _tags_of(children: list[Token], tags: dict[str, None]) -> None:
    for child in children:
        if child.type == "text":
            for m in _TAG.finditer(child.content):
                tags.setdefault(m.group(1).lower(), None)


def _emit(raw: bytes, start: int, end: int, heading_path: str, limits: ChunkLimits, out: list[Chunk]) -> None:
    start, end = _trim(raw, start, end)
    if start >= end:
        return
    if _within(raw, start, end, limits.soft_chars):
        out.append(Chunk(len(out), heading_path, start, end, chunk_text(raw, start, end)))
        return
    for s, e in _split(raw, start, end, limits):
        s, e = _trim(raw, s, e)
        if s < e:
            out.append(Chunk(len(out), heading_path, s, e, chunk_text(raw, s, e)))


def _split(raw: bytes, start: int, end: int, limits: ChunkLimits) -> list[tuple[int, int]]:
    """Cut an oversized range at line, then sentence, then character boundaries."""
    pieces: list[tuple[int, int]] = []
    for ls, le in _units(raw, start, end, limits.soft_chars, limits.hard_chars):
        if pieces and _within(raw, pieces[-1][0], le, limits.soft_chars):
            pieces[-1] = (pieces[-1][0], le)
        else:
            pieces.append((ls, le))
    return pieces


def _units(raw: bytes, start: int, end: int, soft: int, hard: int) -> list[tuple[int, int]]:
    units: list[tuple[int, int]] = []
    pos = start
    while pos < end:
        nl = raw.find(b"\n", pos, end)
        line_end = end if nl == -1 else nl + 1
        if _within(raw, pos, line_end, soft):
            units.append((pos, line_end))
        else:
            units.extend(_sentence_units(raw, pos, line_end, hard))
        pos = line_end
    return units


def _sentence_units(raw: bytes, start: int, end: int, hard: int) -> list[tuple[int, int]]:
    text = raw[start:end].decode("utf-8", "replace")
    cuts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    units: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:]):
        while b - a > hard:  # one sentence longer than the hard limit: cut at a space if possible
            cut = text.rfind(" ", a + 1, a + hard) + 1 or a + hard
            units.append((a, cut))
            a = cut
        if a < b:
            units.append((a, b))
    if not _is_clean_utf8(raw, start, end):
        return [(start, end)] if end - start <= hard else _byte_cuts(start, end, hard)
    # Units are contiguous and in order: walk the byte offsets along with them (linear, not
    # one prefix re-encoding per unit, which made a one-line 10 MB note take minutes).
    out: list[tuple[int, int]] = []
    char_pos, byte_pos = 0, start
    for a, b in units:
        byte_pos += _byte_len(text, char_pos, a)
        unit_start = byte_pos
        byte_pos += _byte_len(text, a, b)
        char_pos = b
        out.append((unit_start, byte_pos))
    return out


def _byte_len(text: str, a: int, b: int) -> int:
    return len(text[a:b].encode("utf-8"))


def _is_clean_utf8(raw: bytes, start: int, end: int) -> bool:
    try:
        raw[start:end].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _byte_cuts(start: int, end: int, hard: int) -> list[tuple[int, int]]:
    return [(s, min(s + hard, end)) for s in range(start, end, hard)]


def _trim(raw: bytes, start: int, end: int) -> tuple[int, int]:
    while end > start and raw[end - 1 : end] in (b"\n", b"\r", b" ", b"\t"):
        end -= 1
    while start < end and raw[start : start + 1] in (b"\n", b"\r", b" ", b"\t"):
        start += 1
    return start, end


def _chars(raw: bytes, start: int, end: int) -> int:
    return len(raw[start:end].decode("utf-8", "replace"))


def _within(raw: bytes, start: int, end: int, limit: int) -> bool:
    """`_chars(raw, start, end) <= limit`, decoding only a range of more bytes than `limit`: each
    character, a replacement one too, takes at least one byte (the chunk loop asked this for every
    block, decoding the section so far each time)."""
    return end - start <= limit or _chars(raw, start, end) <= limit


_NEWLINE = re.compile(rb"\r\n?|\n")


def _line_starts(raw: bytes, body_start: int) -> list[int]:
    # Line breaks as markdown-it counts them (it normalises a lone CR to LF too), so its
    # line numbers map onto the right bytes in old Mac-style files.
    if raw.find(b"\r", body_start) == -1:  # the lines' lengths summed in C: a third of a regex match per line
        return list(accumulate(map((1).__add__, map(len, raw[body_start:].split(b"\n")[:-1])), initial=body_start))
    return [body_start] + [m.end() for m in _NEWLINE.finditer(raw, body_start)]


def _offset(line_starts: list[int], line: int, size: int) -> int:
    return line_starts[line] if line < len(line_starts) else size


def _path(stack: list[tuple[int, str]]) -> str:
    return " > ".join(text for _, text in stack if text)


def chunk_plain_range(raw: bytes, start: int, end: int, heading_path: str, limits: ChunkLimits) -> list[Chunk]:
    """Chunks of plain text (an attachment's), cut at lines and sentences like an oversized block.

    Ordinals count from 0 within the range; the caller numbers the chunks of a whole file.
    """
    out: list[Chunk] = []
    _emit(raw, start, end, heading_path, limits, out)
    return out
