"""Quoted phrases matched word for word, stop words included.

The index drops stop words (see `core.index.analysis`), so a Whoosh phrase query
for "state of the art" only checks that "state" and "art" are neighbours, and
"to be or not to be" has no indexed word at all. Keeping stop words in the
index was measured and rejected: simonw-til's index +12% (16.4 → 18.3 MB) at the
same CPU, keyword quality no better (SciFact train nDCG@10 0.6831 → 0.6832 but R@100
0.906 → 0.902, tldr-en MRR@10 0.659 → 0.653, simonw-til unchanged), and every user's index would have to be
rebuilt, for a rare kind of query. Instead a phrase is checked against the
stored text of its candidates:

- a phrase with indexed words: Whoosh's phrase query finds the candidates, the
  stored text confirms the stop words between them;
- a phrase of stop words only: the stored text of every chunk (within the
  filters) is scanned, after a regular-expression pre-check on the raw text.
  ~0.8 s of CPU at 10k notes (29k chunks), for a query that found nothing before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.base.python_turns import python_turns
from core.index.analysis import accent_map, fold, phrase_spans, pieces, terms_for

PHRASE_FIELDS = ("title", "heading_path", "body")  # where a phrase may stand (as the phrase query looks)
LITERAL_SCORE = 1.0  # score of a chunk found only by its stop-word phrase, per (1 + ln count)


@dataclass(frozen=True, slots=True)
class PhraseCheck:
    """One quoted phrase as the keyword side checks it."""

    phrase: str
    literal_only: bool  # no word the index keeps: only a scan of the stored text can find it
    pattern: re.Pattern[str]  # a quick pre-check on lower-cased, accent-folded text (may over-match)


def phrase_checks(phrases: Sequence[str], langs: Sequence[str]) -> list[PhraseCheck]:
    """A check per phrase that has any word; `langs` are the vault's stemming languages."""
    out = []
    for phrase in phrases:
        words = [fold(w) for _, _, w in pieces(phrase)]
        if not words:
            continue
        # A phrase whose words are all stop words in any of the vault's languages has chunks (in that
        # language) that no index term leads to: only the scan finds them.
        raw = [w for _, _, w in pieces(phrase)]
        literal = any(all(terms_for(lang).term(w) is None for w in raw) for lang in langs or ("en",))
        pattern = re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)")
        out.append(PhraseCheck(phrase, literal, pattern))
    return out


def phrase_count(fields: Mapping[str, Any], checks: Sequence[PhraseCheck]) -> int:
    """How often the chunk holds its rarest phrase; 0 when any phrase is missing."""
    lang = str(fields.get("lang") or "en")
    texts = [str(fields.get(f) or "") for f in PHRASE_FIELDS]
    least: int | None = None
    for check in checks:
        found = 0
        for text in texts:
            if text and check.literal_only and not check.pattern.search(_folded(text)):
                continue
            found += len(phrase_spans(text, check.phrase, lang)) if text else 0
        if not found:
            return 0
        least = found if least is None else min(least, found)
    return least or 0


def verified(hits: Iterable[Any], checks: Sequence[PhraseCheck], limit: int) -> list[tuple[Mapping[str, Any], float]]:
    """The first `limit` Whoosh hits (best first) whose stored text holds every phrase."""
    out: list[tuple[Mapping[str, Any], float]] = []
    turns = python_turns()
    for hit in hits:
        turns.breathe()  # each stored field is a short zlib call outside the GIL: see PythonTurns.breathe
        fields = dict(hit.fields())
        if phrase_count(fields, checks):
            out.append((fields, float(hit.score or 0.0)))
            if len(out) >= limit:
                break
    return out


def scan(
    searcher: Any,
    checks: Sequence[PhraseCheck],
    limit: int,
    *,
    include: set[int] | None,
    exclude: set[int],
    term_scores: Mapping[int, float],
) -> list[tuple[Mapping[str, Any], float]]:
    """Every chunk (within `include`, outside `exclude`) holding every phrase, best first.

    A chunk scores by how often it holds the phrase (1 + ln n) plus the BM25 score
    of the query's other words (`term_scores`, by document number).
    """
    literal = [c for c in checks if c.literal_only]
    reader = searcher.reader()
    found: list[tuple[float, str, Mapping[str, Any]]] = []
    turns = python_turns()
    for docnum in reader.all_doc_ids():
        if docnum in exclude or (include is not None and docnum not in include):
            continue
        turns.breathe()
        fields = reader.stored_fields(docnum)
        if not any(c.pattern.search(_folded(str(fields.get(f) or ""))) for c in literal for f in PHRASE_FIELDS):
            continue
        count = phrase_count(fields, checks)
        if count:
            score = LITERAL_SCORE * (1.0 + math.log(count)) + term_scores.get(docnum, 0.0)
            found.append((score, str(fields["chunk_id"]), fields))
    found.sort(key=lambda f: (-f[0], f[1]))
    return [(fields, score) for score, _, fields in found[:limit]]


def _folded(text: str) -> str:
    low = text.lower()
    return low if low.isascii() else low.translate(accent_map())
