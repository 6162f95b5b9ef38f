"""Chunking: heading-aware pieces with exact byte ranges and bounded size."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.models import Chunk
from core.vault.chunker import ChunkLimits, chunk_markdown, chunk_text
from core.vault.frontmatter import parse_front_matter
from core.vault.notes import parse_note

SMALL = ChunkLimits(soft_chars=200, hard_chars=400, max_chunks=500)


def chunks(raw: bytes, limits: ChunkLimits = ChunkLimits(), body_start: int = 0) -> tuple[Chunk, ...]:
    return chunk_markdown(raw, body_start, limits).chunks


def assert_ranges_exact(raw: bytes, found: tuple[Chunk, ...], limits: ChunkLimits) -> None:
    previous_end = 0
    for i, c in enumerate(found):
        assert c.ordinal == i
        assert 0 <= c.start_byte < c.end_byte <= len(raw)
        assert c.start_byte >= previous_end, "ranges overlap or are out of order"
        assert c.text == chunk_text(raw, c.start_byte, c.end_byte)
        assert len(c.text) <= limits.hard_chars
        previous_end = c.end_byte


# -- headings --------------------------------------------------------------------------------


def test_heading_starts_new_chunk_and_updates_heading_path() -> None:
    raw = b"# A\n\nintro\n\n## B\n\nunder b\n\n### C\n\nunder c\n\n## D\n\nunder d\n\n# E\n\nunder e\n"
    found = chunks(raw)
    assert [(c.heading_path, c.text) for c in found] == [
        ("A", "# A\n\nintro"),
        ("A > B", "## B\n\nunder b"),
        ("A > B > C", "### C\n\nunder c"),
        ("A > D", "## D\n\nunder d"),
        ("E", "# E\n\nunder e"),
    ]


def test_text_before_the_first_heading_has_an_empty_heading_path() -> None:
    found = chunks(b"preamble\n\n# Title\n\nbody\n")
    assert [(c.heading_path, c.text) for c in found] == [("", "preamble"), ("Title", "# Title\n\nbody")]


def test_heading_without_its_own_text_lives_on_in_the_heading_path() -> None:
    found = chunks(b"# Book\n\n## Part one\n\n### Chapter\n\nwords\n")
    assert [(c.heading_path, c.text) for c in found] == [("Book > Part one > Chapter", "### Chapter\n\nwords")]


def test_skipped_heading_levels_pop_back_correctly() -> None:
    found = chunks(b"# A\n\na\n\n### Deep\n\nd\n\n## Mid\n\nm\n")
    assert [c.heading_path for c in found] == ["A", "A > Deep", "A > Mid"]


def test_note_of_only_headings_still_yields_chunks() -> None:
    found = chunks(b"# One\n\n## Two\n")
    assert found and all(c.text.startswith("#") for c in found)


def test_hash_comment_inside_code_fence_is_not_a_heading() -> None:
    raw = b"# Script\n\n```bash\n# install deps\npip install cairn\n```\n\n~~~\n# also code\n~~~\n"
    found = chunks(raw)
    assert [c.heading_path for c in found] == ["Script"]
    assert "# install deps" in found[0].text and "# also code" in found[0].text


def test_hash_without_a_space_or_indented_as_code_is_not_a_heading() -> None:
    found = chunks(b"# Real\n\n#nospace\n\n    # indented code\n")
    assert [c.heading_path for c in found] == ["Real"]


def test_setext_headings_update_the_heading_path() -> None:
    found = chunks(b"Top\n===\n\nintro\n\nSection\n-------\n\nbody\n")
    assert [c.heading_path for c in found] == ["Top", "Top > Section"]


def test_heading_inside_a_blockquote_or_list_does_not_start_a_chunk() -> None:
    found = chunks(b"# Real\n\n> # quoted\n\n- # listed\n")
    assert [c.heading_path for c in found] == ["Real"]


# -- packing and size limits -----------------------------------------------------------------


def test_small_paragraphs_are_packed_up_to_the_soft_limit() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 12 for i in range(12)]  # ~70 chars each
    raw = "\n\n".join(paragraphs).encode()
    found = chunks(raw, SMALL)
    assert 1 < len(found) < len(paragraphs)
    assert all(len(c.text) <= SMALL.soft_chars for c in found)
    joined = " ".join(c.text for c in found)
    assert all(p.strip() in joined for p in paragraphs)


def test_short_note_is_one_chunk() -> None:
    raw = b"# Title\n\nOne.\n\nTwo.\n\n- three\n- four\n"
    assert len(chunks(raw)) == 1


def test_one_giant_paragraph_is_split_at_sentence_ends_within_hard_limit() -> None:
    sentence = "This sentence is a little over forty characters. "
    raw = (sentence * 60).encode()  # ~3000 chars, one line, one paragraph
    found = chunks(raw, SMALL)
    assert len(found) > 1
    assert_ranges_exact(raw, found, SMALL)
    assert all(c.text.endswith(".") for c in found)  # cut where a sentence ends


def test_one_giant_line_without_sentence_ends_is_split_at_spaces() -> None:
    raw = ("lorem " * 1000).encode()
    found = chunks(raw, SMALL)
    assert len(found) > 1
    assert_ranges_exact(raw, found, SMALL)
    assert all(set(c.text.split(" ")) == {"lorem"} for c in found)  # no word is cut in two


def test_one_giant_word_without_spaces_is_cut_at_the_hard_limit() -> None:
    raw = ("é" * 5000).encode()  # two bytes per character: cuts must respect characters
    found = chunks(raw, SMALL)
    assert len(found) >= 5000 // SMALL.hard_chars
    assert_ranges_exact(raw, found, SMALL)
    assert "".join(c.text for c in found) == "é" * 5000


def test_one_line_megabyte_note_is_chunked_in_linear_time() -> None:
    raw = ("Short sentence here. " * 80_000).encode()  # 1.7 MB, one line: took ~15 s when quadratic
    started = time.perf_counter()
    found = chunks(raw)
    assert time.perf_counter() - started < 5
    assert len(found) == ChunkLimits().max_chunks or found[-1].end_byte == len(raw.rstrip())


def test_long_table_is_split_between_rows() -> None:
    rows = "\n".join(f"| row {i} | value {i} | some longer description text {i} |" for i in range(200))
    raw = f"# Data\n\n| a | b | c |\n|---|---|---|\n{rows}\n".encode()
    found = chunks(raw, SMALL)
    assert len(found) > 5
    assert_ranges_exact(raw, found, SMALL)
    assert all(c.heading_path == "Data" for c in found)
    assert all(line.startswith("|") for c in found[1:] for line in c.text.splitlines())


def test_long_code_fence_is_split_within_hard_limit() -> None:
    code = "\n".join(f"print('line {i}')" for i in range(400))
    raw = f"# Code\n\n```python\n{code}\n```\n".encode()
    found = chunks(raw, SMALL)
    assert len(found) > 1
    assert_ranges_exact(raw, found, SMALL)


def test_never_more_than_max_chunks_and_truncation_is_flagged() -> None:
    raw = "\n\n".join(f"# H{i}\n\ntext {i}" for i in range(30)).encode()
    limits = ChunkLimits(soft_chars=200, hard_chars=400, max_chunks=10)
    body = chunk_markdown(raw, 0, limits)
    assert len(body.chunks) == 10 and body.truncated
    assert [c.ordinal for c in body.chunks] == list(range(10))
    assert body.chunks[0].heading_path == "H0"


def test_too_many_chunks_becomes_a_note_warning() -> None:
    raw = "\n\n".join(f"# H{i}\n\ntext {i}" for i in range(30)).encode()
    limits = ChunkLimits(soft_chars=200, hard_chars=400, max_chunks=5)
    doc = parse_note("v", "n.md", raw, size=len(raw), mtime_ns=0, limits=limits)
    assert len(doc.chunks) == 5
    assert [w.code for w in doc.warnings] == ["too_many_chunks"]


def test_within_limit_is_not_truncated() -> None:
    body = chunk_markdown(b"# a\n\nb\n", 0, ChunkLimits(max_chunks=1))
    assert len(body.chunks) == 1 and not body.truncated


# -- byte ranges ------------------------------------------------------------------------------


def test_byte_ranges_point_at_the_chunk_text_in_the_raw_file() -> None:
    raw = "# Ünïcödé heading\n\nCafé crème — 日本語のテキスト。\n\n## Next\n\nmore\n".encode()
    found = chunks(raw)
    for c in found:
        assert raw[c.start_byte : c.end_byte].decode("utf-8") == c.text
    assert [c.heading_path for c in found] == ["Ünïcödé heading", "Ünïcödé heading > Next"]


def test_crlf_ranges_include_the_crs_and_text_uses_lf() -> None:
    raw = b"# A\r\n\r\nline one\r\nline two\r\n\r\n## B\r\n\r\nbody\r\n"
    found = chunks(raw)
    assert [c.heading_path for c in found] == ["A", "A > B"]
    assert found[0].text == "# A\n\nline one\nline two"
    assert raw[found[0].start_byte : found[0].end_byte] == b"# A\r\n\r\nline one\r\nline two"
    assert raw[found[1].start_byte : found[1].end_byte] == b"## B\r\n\r\nbody"


def test_lone_cr_line_endings_still_find_headings_at_the_right_bytes() -> None:
    raw = b"intro\r# Head\r\rtext under head\r"
    found = chunks(raw)
    assert [(c.heading_path, c.text) for c in found] == [("", "intro"), ("Head", "# Head\n\ntext under head")]
    assert raw[found[1].start_byte : found[1].end_byte] == b"# Head\r\rtext under head"


def test_body_start_skips_front_matter_and_ranges_stay_absolute() -> None:
    raw = b"\xef\xbb\xbf---\r\ntitle: x\r\n---\r\n# H\r\n\r\ntext\r\n"
    doc = parse_note("v", "n.md", raw, size=len(raw), mtime_ns=0)
    (c,) = doc.chunks
    assert raw[c.start_byte : c.end_byte] == b"# H\r\n\r\ntext"
    assert c.heading_path == "H" and c.text == "# H\n\ntext"


def test_invalid_utf8_is_decoded_with_replacement_and_ranges_still_hold() -> None:
    raw = b"# Bad \xff bytes\n\nsome \xc3 text \xe2\x82 here\n"
    found = chunks(raw)
    assert_ranges_exact(raw, found, ChunkLimits())
    assert "\ufffd" in found[0].text and found[0].heading_path == "Bad \ufffd bytes"


def test_empty_and_whitespace_only_bodies_have_no_chunks() -> None:
    assert chunks(b"") == ()
    assert chunks(b"\n\n   \r\n\t\n") == ()


def test_chunk_text_normalises_line_endings_and_decodes_with_replacement() -> None:
    assert chunk_text(b"a\r\nb\rc\n\xff", 0, 8) == "a\nb\nc\n\ufffd"


# -- property: byte ranges are always exact ---------------------------------------------------

_words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=0, max_size=60
)
_heading = st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 6), _words)
_fence = st.builds(lambda body: "```\n" + body + "\n```", st.lists(_words, max_size=4).map("\n".join))
_list = st.lists(_words, min_size=1, max_size=4).map(lambda items: "\n".join("- " + i for i in items))
_long_line = st.builds(lambda w, n: (w + " ") * n, st.sampled_from(["word", "Satz.", "ωμέγα", "x"]), st.integers(0, 150))
_table = st.integers(1, 30).map(lambda n: "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | cell {i} |" for i in range(n)))
_block = st.one_of(_heading, _words, _fence, _list, _long_line, _table, st.just("# comment"), st.just("---"))
_sep = st.sampled_from(["\n", "\n\n", "\r\n", "\r\n\r\n", "\r", " "])


@st.composite
def markdownish(draw: st.DrawFn) -> bytes:
    blocks = draw(st.lists(_block, max_size=14))
    parts: list[str] = []
    for block in blocks:
        parts.append(block)
        parts.append(draw(_sep))
    raw = "".join(parts).encode("utf-8")
    if draw(st.booleans()):
        front = draw(st.sampled_from(["---\ntitle: t\n---\n", "---\r\ntags: [a]\r\n---\r\n", "---\n: bad [\n---\n", "---\n"]))
        raw = front.encode() + raw
    if draw(st.booleans()):
        raw = b"\xef\xbb\xbf" + raw
    for _ in range(draw(st.integers(0, 3))):  # sprinkle invalid UTF-8 anywhere, even mid-character
        pos = draw(st.integers(0, len(raw)))
        raw = raw[:pos] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\x80\x80", b"\xed\xa0\x80"])) + raw[pos:]
    return raw


_limits = st.sampled_from(
    [ChunkLimits(40, 80, 1000), ChunkLimits(200, 400, 1000), ChunkLimits(1000, 2000, 2000), ChunkLimits(60, 60, 7)]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=markdownish(), limits=_limits)
def test_every_chunk_range_is_within_the_file_ordered_disjoint_and_exact(raw: bytes, limits: ChunkLimits) -> None:
    doc = parse_note("v", "n.md", raw, size=len(raw), mtime_ns=0, limits=limits)
    assert len(doc.chunks) <= limits.max_chunks
    assert_ranges_exact(raw, doc.chunks, limits)
    body_start = parse_front_matter(raw, 3 if raw.startswith(b"\xef\xbb\xbf") else 0).end_byte
    if body_start < len(raw.rstrip()) or not raw.startswith((b"---", b"\xef\xbb\xbf---")):
        assert all(c.start_byte >= body_start for c in doc.chunks), "no chunk reaches into the front matter or BOM"
    else:  # only front matter: its one property line (the title) is the note's one chunk
        assert len(doc.chunks) <= 1
    for c in doc.chunks:
        assert c.text == c.text.strip(" \t\n\r"), "chunks are trimmed of blank edges"


def test_texts_that_may_hold_a_tag_are_found_in_one_search_as_in_one_each() -> None:
    """`maybe_tagged` (one search over the joined texts) picks exactly the texts a search of each picks."""
    import random

    from core.vault.chunker import _MAYBE_TAG, maybe_tagged
    from core.vault.simple_note import InlineText

    rng = random.Random(3)
    pieces = ["#", "&", "#35;", "&#35;", "&#x23;", "&num;", "a", "é", "1", "_", "/", " ", "\n", "#&", "x#y", "\\", "[", "tag"]
    for _ in range(3000):
        texts = [InlineText("".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6))), i) for i in range(rng.randrange(0, 6))]
        assert maybe_tagged(texts) == [t for t in texts if _MAYBE_TAG.search(t.content) is not None], texts


def test_a_section_is_measured_in_characters_only_past_its_byte_count() -> None:
    """`_within` answers as decoding does: a range of no more bytes than the limit has no more characters."""
    from core.vault.chunker import _chars, _within

    for raw in (b"abc\n" * 30, "é€😀\n".encode() * 20, b"\xff\xfe\xc3" * 40, b""):
        for start in range(0, len(raw), 7):
            for end in range(start, len(raw) + 1, 5):
                for limit in (0, 3, 10, 50):
                    assert _within(raw, start, end, limit) == (_chars(raw, start, end) <= limit)
