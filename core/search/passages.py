"""Note-level and passage-level choice: a note scores by its best passage plus a share of the next,
and the passage shown is the one whose section answers the query.

Fusion scores chunks. A note whose answer spans two sections ("Supported types"
below "Callouts") has two good chunks; a note with one lucky chunk has one. Before
the per-note cut each note's best chunk gets a named share of its next-best one,
so the note with more evidence ranks first. Then, of the passages folded under a
note's row, the one shown is the section whose heading names more of the query's
words (the section that answers it), not merely the first chunk that scored.
"""

from __future__ import annotations

from dataclasses import replace

from core.base.models import Hit, Term, id_order
from core.index.analysis import Stemmer
from core.search.fusion import Fused
from core.search.signals import terms_present

NEXT_SHARE = 0.3  # a note's second-best chunk adds this share of its score to the best one (0.1 and 0.5 did worse)


def aggregate_notes(fused: list[Fused], share: float = NEXT_SHARE) -> list[Fused]:
    """Each note's best chunk plus `share` × its next-best chunk's score, as a named term; best first."""
    if share <= 0:
        return fused
    order = sorted(fused, key=lambda f: (-f.score, *id_order(f.chunk_id)))
    best: dict[tuple[str, str], int] = {}
    second: dict[tuple[str, str], float] = {}
    for i, f in enumerate(order):
        rel, _, vault = id_order(f.chunk_id)
        key = (vault, rel)
        if key not in best:
            best[key] = i
        elif key not in second:
            second[key] = f.score
    out = list(order)
    for key, score in second.items():
        i = best[key]
        term = Term(f"note's next passage ({share:g} × {score:.2f})", share * score)
        out[i] = Fused(out[i].chunk_id, out[i].score + term.value, out[i].terms + (term,))
    out.sort(key=lambda f: (-f.score, *id_order(f.chunk_id)))
    return out


def _heading_words(hit: Hit, stems: frozenset[str], stemmer: Stemmer) -> int:
    """How many of the query's words the passage's own heading (its last level) holds.

    Words of the note's title do not count: they name the note's subject, which
    every section shares ("callout" in "Foldable callouts" of the note "Callouts").
    """
    heading = hit.chunk.heading_path.split(" > ")[-1] if hit.chunk.heading_path else ""
    if not heading:
        return 0
    subject = terms_present(hit.title, stems, stemmer) if hit.title else frozenset()
    return len(terms_present(heading, stems - subject, stemmer))


def choose_passages(hits: list[Hit], stems: frozenset[str], stemmer: Stemmer) -> list[Hit]:
    """Each row shows its note's passage whose heading names the most query words (ties: the best scored).

    The row keeps the note's score and terms (the ranking does not change); the
    passage it showed before moves into `more`, with a term naming the choice.
    """
    if not stems:
        return hits
    out = []
    for h in hits:
        if not h.more or not stems:
            out.append(h)
            continue
        shown = _heading_words(h, stems, stemmer)
        best, best_words = None, shown
        for m in h.more:
            words = _heading_words(m, stems, stemmer)
            if words > best_words and terms_present(m.text, stems, stemmer):
                best, best_words = m, words
        if best is None:
            out.append(h)
            continue
        heading = best.chunk.heading_path.split(" > ")[-1]
        term = Term(f"passage shown: section {heading!r} names the query", 0.0)
        rest = (replace(h, more=()),) + tuple(m for m in h.more if m is not best)
        out.append(replace(best, score=h.score, contributions=h.contributions + (term,), more=rest))
    return out
