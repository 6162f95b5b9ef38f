"""Pseudo-relevance feedback for the keyword side (RM3-like): words the top chunks share.

A typed question often misses the page's own words ("how much free space is
left on my disks" vs. df's "disk space usage"). Feedback reads the first
keyword hits, takes the words they use most that are rare in the vault, and
searches again with those words at a small weight beside the typed ones.

It runs in hybrid search only (in keyword mode it helped one golden set and cost
SciFact, and a change is kept only where it lifts both), and short look-ups
("execute_write_fn commit") are left alone: fed back, the top chunks' common words
outvote the one rare word. The measurements are in docs/ranking.md.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from core.base.models import ParsedQuery, SearchFilters
from core.index.analysis import Stemmer
from core.index.keyword_index import QUESTION_WORDS, KeywordHit, KeywordIndex

FEEDBACK_DOCS = 3  # top keyword chunks read for feedback (5 and 10 did no better on tldr-en)
FEEDBACK_TERMS = 5  # expansion words added to the query
FEEDBACK_WEIGHT = 0.3  # the best expansion word's weight; a typed word weighs 1
MIN_FEEDBACK_TERMS = 3  # a one- or two-word look-up means exactly what it says: no feedback


@dataclass(frozen=True, slots=True)
class FeedbackSettings:
    """How much feedback: chunks read, words added, the best added word's weight."""

    docs: int = FEEDBACK_DOCS
    terms: int = FEEDBACK_TERMS
    weight: float = FEEDBACK_WEIGHT


def expansion_terms(
    docs: Sequence[tuple[str, float]],
    query_terms: Collection[str],
    stemmer: Stemmer,
    doc_frequency: Callable[[Collection[str]], Mapping[str, int]],
    doc_count: int,
    settings: FeedbackSettings = FeedbackSettings(),
) -> dict[str, float]:
    """Expansion words and their weights from the feedback chunks (text, score), best first.

    Each chunk votes for its words by their share of the chunk (P(w|d)) times the
    chunk's share of the feedback scores (P(d|q)), as RM3 does; the votes are
    multiplied by the word's idf so the vault's everyday words ("file", "use")
    do not win. Words of the query itself are left out (they are there already).

    Returns:
        term → weight in (0, settings.weight]; empty when there is nothing to add.
    """
    docs = [(text, score) for text, score in docs[: settings.docs] if score > 0 and text.strip()]
    if not docs or settings.terms <= 0 or settings.weight <= 0 or doc_count <= 0:
        return {}
    total = sum(score for _, score in docs)
    votes: dict[str, float] = {}
    holders: Counter[str] = Counter()  # how many feedback chunks hold each word
    for text, score in docs:
        counts = Counter(term for _, _, term in stemmer.spans(text) if len(term) > 1 and not term.isdigit())
        size = sum(counts.values()) or 1
        holders.update(counts.keys())
        for term, n in counts.items():
            votes[term] = votes.get(term, 0.0) + (n / size) * (score / total)
    for term in query_terms:
        votes.pop(term, None)
    if not votes:
        return {}
    pool = sorted(votes, key=lambda t: (-votes[t], t))[: settings.terms * 4]
    df = doc_frequency(pool)
    # A word in only one feedback chunk is that chunk's own, not what the chunks share.
    rated = {
        term: votes[term] * math.log(1 + doc_count / (1 + df.get(term, 0)))
        for term in pool
        if df.get(term, 0) > 1 and holders[term] >= min(2, len(docs))
    }
    best = sorted(rated.items(), key=lambda kv: (-kv[1], kv[0]))[: settings.terms]
    if not best:
        return {}
    top = best[0][1]
    return {term: round(settings.weight * value / top, 4) for term, value in best}


def search_with_feedback(
    index: KeywordIndex,
    parsed: ParsedQuery,
    filters: SearchFilters,
    limit: int,
    found: list[KeywordHit],
    settings: FeedbackSettings = FeedbackSettings(),
    trusted: Callable[[str], bool] | None = None,
    base: Mapping[str, float] | None = None,
) -> tuple[list[KeywordHit], tuple[str, ...]]:
    """`found` searched again with the feedback words of its first chunks, and those words.

    `base` holds expansion words `found` was searched with (they stay). `trusted` (hybrid) says whether the vector side ranks a chunk's note high:
    feedback then reads only trusted chunks among the first ones, and runs only
    when there is one — words taken from keyword hits the meaning side ranks low
    pushed wrong hits further up ("hide a folder from search").

    Returns `found` unchanged (and no words) for a quoted phrase, a look-up of
    fewer than MIN_FEEDBACK_TERMS words, when no first chunk is trusted, or when
    the top chunks share no rare word.
    """
    if not found or parsed.phrases:
        return found, ()
    asked = set(index.query_terms(" ".join(parsed.terms)))
    question = set(index.query_terms(" ".join(QUESTION_WORDS)))
    if len(asked - question) < MIN_FEEDBACK_TERMS:
        return found, ()
    top = [h for h in found[: settings.docs] if trusted is None or trusted(h.chunk_id)]
    if not top:
        return found, ()
    fetched = index.stored([h.chunk_id for h in top if h.stored is None])
    docs = []
    for h in top:
        chunk = h.stored or fetched.get(h.chunk_id)
        if chunk is not None:
            docs.append((chunk.body, h.score))
    extra = expansion_terms(docs, asked | question, index.stemmer, index.doc_frequencies, index.doc_count(), settings)
    if not extra:
        return found, ()
    words = surface_words(tuple(extra), [text for text, _ in docs], index.stemmer)
    for term, weight in (base or {}).items():  # words already searched beside the typed ones stay searched
        extra.setdefault(term, weight)
    return index.search(parsed, filters, limit, expansion=extra), words


def surface_words(terms: Sequence[str], texts: Sequence[str], stemmer: Stemmer) -> tuple[str, ...]:
    """Each index term as people wrote it in `texts` (its most frequent spelling), for the Why tab.

    The index keeps stems ("devic, primari, configur"); a reader expects "device,
    primary, configuration". A term no text spells stays as it is.
    """
    wanted = set(terms)
    seen: dict[str, Counter[str]] = {t: Counter() for t in wanted}
    for text in texts:
        for start, end, term in stemmer.spans(text):
            if term in wanted:
                seen[term][text[start:end].lower()] += 1
    return tuple(seen[t].most_common(1)[0][0] if seen[t] else t for t in terms)
