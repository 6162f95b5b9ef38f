"""The new documents' postings, in memory until the segment is written: `TermPool`.

Split from `core.index.fast_writer`, whose writer files into it and writes it out at
commit (`w3_postings.write_stream`). It stands in for Whoosh's posting pool, which keeps a
tuple per posting and sorts them all at commit.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, repeat
from typing import Any

from core.index.field_analysis import FieldItems, Term
from core.index.w3_postings import Rows

Posting = tuple[str, bytes, int, float, bytes | None]  # (field, term bytes, docnum, weight, value): Whoosh's pool item
_consume: Callable[[Iterable[Any]], None] = deque[Any](maxlen=0).extend  # runs an iterator to its end in C, keeping nothing


class TermPool:
    """Whoosh's posting pool, as dicts of posting lists instead of one big list to sort.

    Postings arrive in ascending docnum order (new documents, then merged segments
    after them), so each list is already sorted; `ordered` sorts the keys only.
    A term's postings are one flat list, docnum, weight, value, docnum... (`Rows`): no
    tuple per posting to make, track and free (on rust-book, 127k postings, filing them
    took 50 ms with a tuple each and 20 ms flat, and freeing the pool 17 ms against 2 ms).
    A text field's terms are filed as the analyser's `str` objects (`FieldItems`) and
    encoded once each on the way out; a field that is given bytes too is filed by bytes.
    """

    def __init__(self) -> None:
        self.postings: dict[str, defaultdict[Term, Rows]] = {}  # field -> term -> flat postings
        self.fieldnames: set[str] = set()
        self.text_fields: set[str] = set()  # fields whose terms are all `str` (the others': all bytes)
        self.count = 0

    def _terms(self, fieldname: str, text: bool) -> defaultdict[Term, Rows]:
        terms = self.postings.get(fieldname)
        if terms is None:
            terms = self.postings[fieldname] = defaultdict(list)
            self.fieldnames.add(fieldname)
            if text:
                self.text_fields.add(fieldname)
        elif not text and fieldname in self.text_fields:  # bytes for a field filed by text: all by bytes now
            terms = self.postings[fieldname] = defaultdict(list, zip(map(str.encode, terms), terms.values()))  # type: ignore[arg-type]
            self.text_fields.discard(fieldname)
        return terms

    def add(self, item: Posting) -> None:
        fieldname, tbytes, docnum, weight, vbytes = item
        self.count += 1
        self._terms(fieldname, False)[tbytes] += (docnum, weight, vbytes)

    def add_items(self, fieldname: str, docnum: int, items: FieldItems) -> None:
        """A document's analysed items of one field, filed by term in C (`map` over the term
        dict's `__getitem__`, which makes a new term's list, and `list.extend`)."""
        terms_, weights, values, _ = items
        if not terms_:  # a field without terms must not reach the segment's field map
            return
        text = type(terms_[0]) is str
        terms = self._terms(fieldname, text)
        if text and fieldname not in self.text_fields:  # text for a field filed by bytes
            terms_ = tuple(map(str.encode, terms_))  # type: ignore[arg-type]
        if len(terms_) == 1:  # an id, a path, a date: ~10 of a chunk's 15 fields, not worth the C-level pass's set-up
            terms[terms_[0]].extend((docnum, weights[0], values[0]))
            self.count += 1
            return
        _consume(map(list.extend, map(terms.__getitem__, terms_), zip(repeat(docnum), weights, values, strict=True)))
        self.count += len(terms_)

    def add_run(self, fieldname: str, first: int, count: int, items: FieldItems) -> None:
        """The same analysed items for `count` consecutive documents from `first` (a note's title in
        each of its chunks): each term's postings for all of them in one `extend`, what `add_items`
        once per document files."""
        terms_, weights, values, _ = items
        if count == 1 or not terms_:
            self.add_items(fieldname, first, items)
            return
        text = type(terms_[0]) is str
        terms = self._terms(fieldname, text)
        if text and fieldname not in self.text_fields:
            terms_ = tuple(map(str.encode, terms_))  # type: ignore[arg-type]
        docnums = range(first, first + count)
        for term, weight, value in zip(terms_, weights, values, strict=True):
            terms[term].extend(chain.from_iterable(zip(docnums, repeat(weight), repeat(value))))
        self.count += count * len(terms_)

    def ordered(self) -> Iterator[tuple[str, bytes, Rows]]:
        """(field, term bytes, postings) in Whoosh's order: by field, then by term's bytes. A text
        field's terms sort as text, the same order (UTF-8 keeps code point order), then are encoded."""
        text_fields = self.text_fields
        for fieldname, terms in sorted(self.postings.items()):
            if fieldname in text_fields:
                for text in sorted(terms):
                    yield fieldname, text.encode(), terms[text]  # type: ignore[union-attr]  # str keys
            else:
                for tbytes in sorted(terms):
                    yield fieldname, tbytes, terms[tbytes]  # type: ignore[misc]  # bytes keys

    def iter_postings(self) -> Iterator[Posting]:
        for fieldname, tbytes, rows in self.ordered():
            for i in range(0, len(rows), 3):
                yield fieldname, tbytes, rows[i], rows[i + 1], rows[i + 2]

    def cleanup(self) -> None:
        self.postings = {}
        self.text_fields = set()
        self.count = 0


