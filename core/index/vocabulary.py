"""A keyword index's vocabulary: every indexed term of the title, names and body fields with its chunk count.

The dictionary that spelling correction (core.search.spelling) corrects from: the
vault's own words, as the index holds them. Reading it walks the term tables once
(tens of milliseconds for a vault of thousands of notes), so it is read only when a
query has a word the vault lacks, and kept per searcher: a searcher is one state of
the index, and a changed index gets a new one.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

FIELDS = ("body", "title", "names")

_cache: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def searcher_vocabulary(searcher: Any) -> dict[str, int]:
    """term → the most chunks holding it in any of FIELDS, for this searcher's state of the index."""
    with _lock:
        found = _cache.get(searcher)
    if found is not None:
        return found
    terms: dict[str, int] = {}
    reader = searcher.reader()
    for field in FIELDS:
        if field not in reader.indexed_field_names():
            continue
        for raw, info in reader.iter_field(field):
            term = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
            terms[term] = max(terms.get(term, 0), int(info.doc_frequency()))
    with _lock:
        _cache[searcher] = terms
    return terms
