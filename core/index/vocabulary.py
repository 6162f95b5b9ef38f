"""A keyword index's vocabulary: which words it knows, and its title, names and body terms for near matches.

What spelling correction (core.search.spelling) asks of the index on every search.
Both answers are kept per searcher: a searcher is one state of the index, and a
changed index (a live edit) gets a new one, so nothing here is ever stale.

- `words_known`: whether the index holds a typed word (any of its analysed terms in
  a title, folder name or body). Asked for every content word of every query, so it is one term
  table probe per field, remembered per word.
- `searcher_terms`: every title and body term, read only when a query has a word the
  vault lacks. It lists the term tables' keys without decoding their postings
  information (the counts are looked up for the few near terms only), and groups the
  terms by length: a term more than `distance` letters longer or shorter than the
  typed one cannot be within `distance` edits of it, so a near-match look-up reads a
  few lengths' terms instead of the whole vocabulary.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress
from pathlib import Path
from typing import Any, overload

from core.base.atomic import write_bytes_atomic
from core.base.digest import sha256_hex

FIELDS = ("body", "title", "names")
TERMS_EXT = "cairnterms"  # `<segment id>.cairnterms`: Whoosh's clean-up removes it with its segment
TERMS_FORMAT = "terms-1"
MERGED_EXT = "cairnmerged"  # every segment's terms in one list, for one set of segments (one kept at a time)


class TermList(Sequence[str]):
    """Terms in a fixed order, grouped by length for `near`; equal by identity (it is a cache key)."""

    __slots__ = ("__weakref__", "_by_length", "_lengths", "_set", "_terms")

    def __init__(self, terms: Iterable[str]) -> None:
        self._terms = tuple(terms)
        self._set: frozenset[str] | None = None  # for `in`, made by the first question
        self._lengths = list(map(len, self._terms))
        self._by_length: dict[int, tuple[list[str], list[int]]] = {}  # filled per length asked (a look-up reads a few)

    def _group(self, length: int) -> tuple[list[str], list[int]]:
        """The terms of one length, in list order, and their positions (found at C speed, not term by term)."""
        group = self._by_length.get(length)
        if group is None:
            positions = list(compress(range(len(self._terms)), map(length.__eq__, self._lengths)))
            group = self._by_length[length] = ([self._terms[p] for p in positions], positions)
        return group

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return self._terms[i]

    def __len__(self) -> int:
        return len(self._terms)

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __contains__(self, term: object) -> bool:
        """Whether the list holds `term`: a set look-up (spelling asks it for hundreds of words a slip from a typo)."""
        if self._set is None:
            self._set = frozenset(self._terms)
        return term in self._set

    def near(self, term: str, distance: int, limit: int) -> list[tuple[str, int]]:
        """Up to `limit` terms within `distance` Levenshtein edits of `term`, closest first, ties in list order.

        The same answer as rapidfuzz's `process.extract` over the whole list with
        `score_cutoff=distance`, read from the lengths that can be that close.
        """
        from rapidfuzz import process  # imported by the first query with a word the vault lacks
        from rapidfuzz.distance import Levenshtein

        found: list[tuple[int, int, str]] = []
        for length in range(max(1, len(term) - distance), len(term) + distance + 1):
            group = self._group(length)
            if not group[0]:
                continue
            for cand, dist, idx in process.extract(term, group[0], scorer=Levenshtein.distance, score_cutoff=distance, limit=limit):
                found.append((int(dist), group[1][idx], cand))
        found.sort()
        return [(cand, dist) for dist, _pos, cand in found[:limit]]


class _SearcherWords:
    """What one searcher's state of the index knows of words: filled as queries ask."""

    __slots__ = ("known", "terms")

    def __init__(self) -> None:
        self.known: dict[str, bool] = {}
        self.terms: TermList | None = None


_cache: weakref.WeakKeyDictionary[Any, _SearcherWords] = weakref.WeakKeyDictionary()
_merged: dict[str, tuple[tuple[TermList, ...], TermList]] = {}  # "last": the last several vaults' merge
_lock = threading.Lock()


def _entry(searcher: Any) -> _SearcherWords:
    with _lock:
        entry = _cache.get(searcher)
        if entry is None:
            entry = _cache[searcher] = _SearcherWords()
        return entry


def words_known(searcher: Any, words: Iterable[str], analyse: Callable[[str], list[str]]) -> dict[str, bool]:
    """word → whether this state of the index holds it: a word with no terms (a stop word) counts as known.

    `analyse` gives a word's index terms (one per language the vault is analysed in).
    """
    entry = _entry(searcher)
    reader = None
    out: dict[str, bool] = {}
    for word in words:
        known = entry.known.get(word)
        if known is None:
            reader = reader or searcher.reader()
            terms = analyse(word)
            known = not terms or any((field, t) in reader for t in terms for field in FIELDS)
            entry.known[word] = known
        out[word] = known
    return out


def searcher_terms(searcher: Any, directory: Path | None = None) -> TermList:
    """Every title and body term of this state of the index: the body's in index order, then the title's others.

    Read segment by segment: a segment never changes, so its terms are kept beside it in
    `directory` (the Whoosh folder, as `<segment>.cairnterms`, a name Whoosh deletes with the
    segment). Listing the term tables costs ~0.4 s at 10k notes (each key a Python call),
    which every cold `cairn search` with a typo or a word the vault lacks paid; the kept
    lists are read in ~30 ms. Whoosh orders terms by their UTF-8 bytes, which is the order
    of the strings' code points, so sorting the union gives the order the merged lexicon had.
    The union itself (decoding and hashing every segment's copy of each term: ~60 ms at 10k
    notes, 200k strings for 30k terms) is kept too, for the set of segments it was made of.
    """
    entry = _entry(searcher)
    if entry.terms is not None:
        return entry.terms
    leaves = [leaf for leaf, _base in searcher.reader().leaf_readers()]
    merged = _merged_path(leaves, directory)
    ordered = _read_merged(merged)
    if ordered is None:
        ordered = _union(leaves, directory)
        _keep_merged(merged, ordered)
    entry.terms = TermList(ordered)
    return entry.terms


def _union(leaves: Sequence[Any], directory: Path | None) -> list[str]:
    by_field: dict[str, set[str]] = {field: set() for field in FIELDS}
    for leaf in leaves:
        for field, terms in _segment_terms(leaf, directory).items():
            by_field[field].update(terms)
    ordered: list[str] = []
    seen: set[str] = set()
    for field in FIELDS:
        new = by_field[field] - seen
        ordered += sorted(new)
        seen |= new
    return ordered


def _merged_path(leaves: Sequence[Any], directory: Path | None) -> Path | None:
    """Where the union of these segments' terms is kept: named by the segments, so another set never reads it."""
    paths = [_kept_path(leaf, directory) for leaf in leaves]
    if directory is None or not paths or any(p is None for p in paths):
        return None
    names = "\n".join(sorted(p.name for p in paths if p is not None))
    return directory / f"terms-{sha256_hex(names.encode())[:20]}.{MERGED_EXT}"


def _read_merged(path: Path | None) -> list[str] | None:
    if path is None:
        return None
    try:
        kept = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if isinstance(kept, dict) and kept.get("format") == TERMS_FORMAT and isinstance(kept.get("terms"), list):
        return kept["terms"]
    return None


def _keep_merged(path: Path | None, ordered: list[str]) -> None:
    """Write the union for its set of segments, and drop the one kept for an earlier set (a cache: failures are ignored)."""
    if path is None:
        return
    try:
        write_bytes_atomic(path, json.dumps({"format": TERMS_FORMAT, "terms": ordered}, ensure_ascii=False).encode("utf-8"))
        for old in path.parent.glob(f"*.{MERGED_EXT}"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass


def keep_terms(index: Any) -> None:
    """Write the term list of each segment of `index` (a `KeywordIndex`) that has none yet.

    Run after a full embedding pass (minutes of work already): the first search with a
    typo after a build then reads lists too (listing a 40k-note vault's tables took seconds).
    """
    with index.reading() as searcher:
        for leaf, _base in searcher.reader().leaf_readers():
            path = _kept_path(leaf, index.directory)
            if path is not None and not path.exists():
                _segment_terms(leaf, index.directory)


def _kept_path(leaf: Any, directory: Path | None) -> Path | None:
    segment = getattr(leaf, "segment", None)
    if directory is None or segment is None:
        return None
    return directory / f"{segment().segment_id()}.{TERMS_EXT}"


def _segment_terms(leaf: Any, directory: Path | None) -> dict[str, list[str]]:
    """One segment reader's terms per field: kept in `directory` after the first read."""
    path = _kept_path(leaf, directory)
    if path is not None:
        try:
            kept = json.loads(path.read_bytes())
        except (OSError, ValueError):
            kept = None
        if isinstance(kept, dict) and kept.get("format") == TERMS_FORMAT and isinstance(kept.get("fields"), dict):
            return kept["fields"]
    indexed = leaf.indexed_field_names()
    fields = {field: [_text(raw) for raw in leaf.lexicon(field)] for field in FIELDS if field in indexed}
    if path is not None:
        try:  # a cache: another process may write the same bytes, and a lost write is read again
            write_bytes_atomic(path, json.dumps({"format": TERMS_FORMAT, "fields": fields}, ensure_ascii=False).encode("utf-8"))
        except OSError:
            pass
    return fields


def _text(raw: Any) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def merged_terms(lists: Sequence[TermList]) -> TermList:
    """The terms of several vaults, each once, in the order of `lists` (the last merge is kept)."""
    if len(lists) == 1:
        return lists[0]
    key = tuple(lists)
    with _lock:
        cached = _merged.get("last")
    if cached is not None and len(cached[0]) == len(key) and all(a is b for a, b in zip(cached[0], key, strict=True)):
        return cached[1]
    merged = TermList(dict.fromkeys(t for terms in lists for t in terms))
    with _lock:
        _merged["last"] = (key, merged)
    return merged



def chunks_holding(searcher: Any, term: str) -> frozenset[int]:
    """The document numbers of this state of the index whose title or body holds `term`.

    Spelling asks it only for the few equally close corrections of a word (see `holds_any`).
    """
    reader = searcher.reader()
    out: set[int] = set()
    for field in ("body", "title"):
        if (field, term) in reader:
            out.update(reader.postings(field, term).all_ids())
    return frozenset(out)


def holds_any(searcher: Any, term: str, docs: frozenset[int]) -> bool:
    """Whether any of `docs` holds `term` in its title or body.

    Skips through the term's postings to each of the few documents instead of
    reading them all: a common word's list is long, and only a yes or no is asked.
    """
    reader = searcher.reader()
    for field in ("body", "title"):
        if (field, term) not in reader:
            continue
        matcher = reader.postings(field, term)
        for doc in sorted(docs):
            if not matcher.is_active():
                break
            if matcher.id() < doc:
                matcher.skip_to(doc)
                if not matcher.is_active():
                    break
            if matcher.id() == doc:
                return True
    return False
