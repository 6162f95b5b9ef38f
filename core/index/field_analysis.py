"""A chunk's indexed fields analysed as Whoosh's `field.index` would, in one pass and remembered.

Split from `core.index.fast_writer`, which files what this gives. Text fields are cut
into words once (`analysis.plain_words`, or `pieces` for CJK) and turned into terms
through the same word -> term memo the analyzer uses; a note's title, aliases, folders
and tags, the same for each of its chunks, are analysed once per note and language. A
test holds the result identical to Whoosh's own `field.index`.
"""

from __future__ import annotations

from operator import sub
from typing import Any

from whoosh.analysis.analyzers import CompositeAnalyzer
from whoosh.analysis.tokenizers import IDTokenizer

from core.index.analysis import ScriptTokenizer, TermFilter, has_cjk, language, pieces, plain_words, terms_for
from core.index.whoosh_pin import dumps, formats, pack_uint

#: A field's analysed value: its terms, their weights and encoded values (parallel tuples: ~3x cheaper to
#: unpickle than a tuple per term), and its scorable length. A text field's terms are the analyser's own
#: `str` objects (hashed once, shared by every chunk: filing them by term costs ~40 % less than fresh UTF-8
#: bytes each chunk), encoded once per distinct term at commit; other fields' terms are Whoosh's bytes.
Term = str | bytes
FieldItems = tuple[tuple[Term, ...], tuple[float, ...], tuple[bytes, ...], int]
NOTE_FIELDS = frozenset({"title", "aliases", "names", "folders", "tags"})  # the same for every chunk of a note
#: Text fields whose analysed value is remembered: a note's own, and a heading's path, which the chunks of a
#: long section share (rust-book: 1,658 chunks, 511 distinct paths).
MEMO_FIELDS = NOTE_FIELDS | {"heading_path"}
MEMO_LIMIT = 4096  # note-level values remembered; a note's chunks arrive together, so this is plenty


def is_fast_text(field: Any) -> bool:
    """A text field our own loop can analyse: positions, and exactly Cairn's analyzer."""
    ana = getattr(field, "analyzer", None)
    return (
        type(field.format) is formats.Positions
        and isinstance(ana, CompositeAnalyzer)
        and len(ana.items) == 2
        and type(ana.items[0]) is ScriptTokenizer
        and type(ana.items[1]) is TermFilter
    )


def text_items(value: str, lang: str, field_boost: float) -> FieldItems:
    """What `field.index(value)` yields for a positions field with Cairn's analyzer, in `lang`, each
    term as text (its UTF-8 bytes are Whoosh's term).

    Mirrors ScriptTokenizer | TermFilter | Positions.word_values: a term's positions count
    kept tokens, except that the first kept token keeps its raw position (TermFilter's
    renumbering starts from it). Text without CJK (most chunks) is cut by one `findall`.
    """
    terms = terms_for(lang)
    cache = terms.cache
    term = terms.term
    words = words_of(value)
    poses: dict[str, list[int]] = {}
    get = poses.get
    missing = _MISSING  # not in the memo yet (the memo holds None for a stop word): told apart by identity
    # The first kept word keeps its raw position and the others count on from it (TermFilter's
    # renumbering), so it is found first and the main loop needs no branch for it (~4 % fewer
    # instructions in this function on rust-book, callgrind).
    for raw_pos, word in enumerate(words):
        text = cache.get(word, missing)
        if text is missing:
            text = term(word)
        if text is not None:
            poses[text] = [raw_pos]
            pos = raw_pos + 1
            kept = 1
            break
    else:  # nothing but stop words
        return (), (), (), 0
    for word in words[pos:]:
        text = cache.get(word, missing)
        if text is missing:
            text = term(word)
        if text is None:
            continue
        found = get(text)
        if found is None:
            poses[text] = [pos]
        else:
            found.append(pos)
        pos += 1
        kept += 1
    single = _SINGLE
    weights = []
    values = []
    for plist in poses.values():
        n = len(plist)
        if n == 1:
            p = plist[0]
            vbytes = single.get(p)
            if vbytes is None:
                vbytes = single[p] = _encode_positions([p])
        elif n == 2:  # the most common repeat, and the cheapest to write out
            first, second = plist
            vbytes = _encode_positions([first, second - first])
        else:
            vbytes = _encode_positions([plist[0], *map(sub, plist[1:], plist)])
        weights.append(float(n) * field_boost)
        values.append(vbytes)
    return tuple(poses), tuple(weights), tuple(values), kept  # the terms as text: see `FieldItems`


_MISSING: Any = object()
_SINGLE: dict[int, bytes] = {}  # a lone position's encoding: most terms occur once in a chunk


def _encode_positions(deltas: list[int]) -> bytes:
    """Positions.encode for position deltas."""
    return pack_uint(len(deltas)) + dumps(deltas, 2)


def words_of(value: str) -> list[str]:
    """The raw tokens of `value`, as `analysis.pieces` cuts them."""
    if not has_cjk(value):
        return plain_words(value)
    return [word for _, _, word in pieces(value)]


Analysed = dict[str, FieldItems]  # field -> its terms, weights, values and scorable length


class FieldAnalyser:
    """A chunk's indexed fields as Whoosh's `field.index` would give them, with a per-note memo.

    Runs in the writer, for each chunk it adds (in both processes of a parallel build). What it
    returns pickles, so analysing and filing can be timed apart (`bench/bench_keyword_writer.py`).
    """

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.fields: dict[str, Any] = dict(schema.items())  # Schema.__getitem__ is a Python call: ~15 lookups a chunk
        self.fast = {name: is_fast_text(field) for name, field in schema.items()}
        self.plain_id = {name: is_plain_id(field) for name, field in schema.items()}
        self.by_language = {name: reads_language(field) for name, field in schema.items()}
        self.indexed = frozenset(name for name, field in schema.items() if field.indexed)
        self.memo: dict[tuple[str, Any, str], FieldItems] = {}

    def analyse(self, fields: dict[str, Any], lang: str) -> Analysed:
        indexed = self.indexed
        return {name: self.items(name, value, lang) for name, value in fields.items() if name in indexed and value is not None}

    def shares(self, fieldname: str, value: Any) -> bool:
        """Whether `items` gives equal values of this field one remembered object (or objects that pickle
        alike: an ID's lone term), so documents sharing the value may share its items (`note_filing`)."""
        if isinstance(value, str) and (self.plain_id[fieldname] or self.fast[fieldname]):
            return self.plain_id[fieldname] or fieldname in MEMO_FIELDS
        return isinstance(value, (str, int))

    def items(self, fieldname: str, value: Any, lang: str) -> FieldItems:
        """One field value's terms, weights, values and scorable length, remembered for a note's own fields."""
        field = self.fields[fieldname]
        fast = self.fast[fieldname] and isinstance(value, str)
        if self.plain_id[fieldname] and isinstance(value, str):  # the value is the term (a path, an id)
            return (value.encode("utf-8"),), (field.format.field_boost,), (b"",), 0
        if fast:  # text analysed in the chunk's language: a note's own fields and heading paths are remembered
            key = (fieldname, value, lang) if fieldname in MEMO_FIELDS else None
        else:  # a keyword or number field: the language does not matter, values recur (ordinals, folders)
            key = (fieldname, value, "") if isinstance(value, (str, int)) else None
        if key is not None:
            found = self.memo.get(key)
            if found is not None:
                return found
        if fast:
            items = text_items(value, lang, field.format.field_boost)
            if not field.scorable:
                items = (*items[:3], 0)
        else:
            with language(lang):
                found_items = list(field.index(value))
            length = sum(freq for _, freq, _, _ in found_items) if field.scorable else 0
            items = (
                tuple(t for t, _, _, _ in found_items),
                tuple(w for _, _, w, _ in found_items),
                tuple(v for _, _, _, v in found_items),
                length,
            )
        # Whoosh multiplies weights by the document's and field's boost: both 1 here (no `_boost` arguments).
        if key is not None:
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()
            self.memo[key] = items
        return items


def reads_language(field: Any) -> bool:
    """Whether a field's terms depend on the language its text is analysed in (our `TermFilter` stems)."""
    ana = getattr(field, "analyzer", None)
    parts = ana.items if isinstance(ana, CompositeAnalyzer) else [ana]
    return any(isinstance(part, TermFilter) for part in parts)


def is_plain_id(field: Any) -> bool:
    """An ID field that indexes its value whole and as is: its one term is the value."""
    return type(field.format) is formats.Existence and type(getattr(field, "analyzer", None)) is IDTokenizer and not field.scorable
