"""The keyword writer's shortcuts, each held equal to the plain computation it replaces.

`test_fast_writer.py` holds whole segments equal to Whoosh's; these pin the pieces that
segment test could pass by luck: the possessive word pattern, text terms filed as `str`
(and sorted as text), a block's weights summed as a product, lengths looked up in one pass.
"""

from __future__ import annotations

import random
import re
from array import array
from typing import Any

from core.index.analysis import plain_words
from core.index.term_pool import TermPool
from core.index.w3_postings import _block_weights, _blocks, _ByteOf, _Lengths
from tests.fixture_notes import note_texts

PLAIN_WORD = re.compile(r"\w+(?:\.\w+)*")  # the pattern `plain_words` spells possessively


def test_plain_words_cut_text_as_the_plain_pattern_does() -> None:
    rng = random.Random(7)
    alphabet = "ab.._ 1é\u00a0-\n\t,x\u0663\u2019😀Ω"
    texts = ["", ".", "a.", ".a", "a..b", "os.path.join()", "3.14.", "x.y z.", "é.ü_1.2"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(20_000)]
    texts += list(note_texts(20).values())
    for text in texts:
        assert plain_words(text) == PLAIN_WORD.findall(text), text


def test_text_sorts_as_its_utf8_bytes() -> None:
    """The pool sorts a text field's terms as `str`: the order must be their bytes' order."""
    rng = random.Random(11)
    chars = ["a", "z", "é", "ÿ", "Ā", "ｱ", "\uffff", "😀", "\U0010fffd", "0", "_", "\u0800", "\u07ff"]
    terms = list({"".join(rng.choice(chars) for _ in range(rng.randint(1, 4))) for _ in range(5_000)})
    assert [t.encode() for t in sorted(terms)] == sorted(t.encode() for t in terms)


def test_text_terms_are_filed_as_text_and_written_as_bytes_in_byte_order() -> None:
    pool = TermPool()
    pool.add_items("body", 0, (("zeta", "été", "alpha"), (1.0, 2.0, 1.0), (b"p", b"q", b"r"), 4))
    pool.add_items("body", 1, (("été",), (1.0,), (b"s",), 1))
    pool.add_items("tags", 1, ((b"rust",), (1.0,), (b"",), 1))
    assert pool.text_fields == {"body"}
    assert list(pool.postings["body"]) == ["zeta", "été", "alpha"]  # filed by the analyser's own str
    assert list(pool.ordered()) == [
        ("body", b"alpha", [0, 1.0, b"r"]),
        ("body", b"zeta", [0, 1.0, b"p"]),
        ("body", "été".encode(), [0, 2.0, b"q", 1, 1.0, b"s"]),
        ("tags", b"rust", [1, 1.0, b""]),
    ]
    assert [p[:3] for p in pool.iter_postings()] == [
        ("body", b"alpha", 0),
        ("body", b"zeta", 0),
        ("body", "été".encode(), 0),
        ("body", "été".encode(), 1),
        ("tags", b"rust", 1),
    ]


def test_a_field_given_bytes_and_text_is_filed_by_bytes_in_either_order() -> None:
    first_text = TermPool()
    first_text.add_items("body", 0, (("été", "b"), (1.0, 1.0), (b"x", b"y"), 2))
    first_text.add(("body", "été".encode(), 1, 3.0, b"z"))  # a merged segment's posting: bytes
    first_text.add_items("body", 2, (("été",), (1.0,), (b"w",), 1))
    first_bytes = TermPool()
    first_bytes.add_items("body", 0, ((b"b", "été".encode()), (1.0, 1.0), (b"y", b"x"), 2))
    first_bytes.add(("body", "été".encode(), 1, 3.0, b"z"))
    first_bytes.add_items("body", 2, (("été",), (1.0,), (b"w",), 1))
    for pool in (first_text, first_bytes):
        assert pool.text_fields == set()
        assert all(type(t) is bytes for t in pool.postings["body"])
        assert list(pool.ordered()) == [("body", b"b", [0, 1.0, b"y"]), ("body", "été".encode(), [0, 1.0, b"x", 1, 3.0, b"z", 2, 1.0, b"w"])]
        assert pool.count == 4


def _reference_weights(raw: list[float]) -> tuple[float, float, Any]:
    """_blocks' weights as they were computed before the one-weight shortcut."""
    weights = array("f", raw)
    raw_max = max(raw)
    count = len(weights)
    if weights.count(1.0) == count:
        mini: Any = None
    elif weights.count(weights[0]) == count:
        mini = weights[0]
    else:
        mini = tuple(weights)
    return sum(weights), (raw_max if raw_max > 0 else 0), mini


def test_a_blocks_weights_equal_the_float32_values_added_one_by_one() -> None:
    rng = random.Random(5)
    boosts = [1.0, 1.5, 2.0, 0.1, 1.1, 3.3, 1e-3, 7.77]
    for _ in range(3_000):
        boost = rng.choice(boosts)
        count = rng.randint(1, 128)
        if rng.random() < 0.6:  # one weight for every posting: the shortcut
            raw = [float(rng.randint(1, 40)) * boost] * count
        else:
            raw = [float(rng.choice([1, 1, 1, 2, rng.randint(1, 90)])) * boost for _ in range(count)]
        got = _block_weights(raw, count)
        want = _reference_weights(raw)
        assert got == want and type(got[0]) is type(want[0]) and type(got[2]) is type(want[2]), (raw, got, want)


def test_lengths_come_from_one_lookup_pass_or_the_segment_for_merged_documents() -> None:
    asked: list[int] = []

    def fallback(docnum: int, fieldname: str) -> int:
        asked.append(docnum)
        return 7 if docnum != 9 else 0

    lengths = _Lengths("body", {0: 3, 1: 5}, fallback)
    assert lengths.many([0, 1]) == [3, 5] and not asked
    assert lengths.many([1, 8, 9]) == [5, 7, 0] and asked == [8, 9]
    assert lengths.many([8, 9]) == [7, 0] and asked == [8, 9]  # remembered


def test_a_block_skips_a_zero_length_as_whoosh_does() -> None:
    """A document whose length reads back as 0 (a merged one) does not set the block's shortest length."""
    lengths = _Lengths("body", {0: 4, 1: 0, 2: 9}, None)
    out = bytearray()
    stats = _blocks(out, [0, 1.0, b"a", 1, 1.0, b"b", 2, 2.0, b"c"], 128, 0, None, lengths, _ByteOf())
    assert stats[2:] == (_ByteOf()[4], _ByteOf()[9])
    zero = _Lengths("body", {5: 0}, None)
    assert _blocks(bytearray(), [5, 1.0, b"a"], 128, 0, None, zero, _ByteOf())[2:] == (0, 0)


def test_a_remembered_length_byte_and_quantised_length_are_whooshs() -> None:
    from core.index.note_filing import QUANTISED as _QUANTISED
    from core.index.whoosh_pin import byte_to_length, length_to_byte

    for length in [*range(1, 3_000), *range(3_000, 2_000_000, 997), 2**31 - 1]:
        assert _QUANTISED[length] == (length_to_byte(length), byte_to_length(length_to_byte(length))), length
