"""Note-level and passage-level choice: a note scores by its best passage plus a share of the next,
and the passage shown is the one whose section answers the query.

Fusion scores chunks. A note whose answer spans two sections ("Supported types"
below "Callouts") has two good chunks; a note with one lucky chunk has one. Before
the per-note cut each note's best chunk gets a named share of its next-best one,
so the note with more evidence ranks first, as far as that next chunk is evidence of
its own: one that repeats the best (the two halves of a SciFact abstract, cosine
~0.82) adds little or nothing, a different section (~0.65 on documentation pages)
its full share. Then, of the passages folded under a
note's row, the one shown is the section whose heading names more of the query's
words (the section that answers it), not merely the first chunk that scored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from core.base.models import Hit, Term, id_order, split_chunk_id
from core.index.analysis import Stemmer
from core.search.fusion import Fused
from core.search.sides import VaultSearchSide
from core.search.signals import terms_present

NEXT_SHARE = 0.3  # a note's second-best chunk adds this share of its score to the best one (0.1 and 0.5 did worse)
# How alike (cosine of the two chunks' vectors) the next passage may be to the best one and still count
# in full, and from where it counts for nothing: two halves of one abstract (SciFact: median 0.82, 10 %
# below 0.72) say the same thing twice; two sections of a documentation page (best and next of the top
# notes: median 0.64 Obsidian Tasks, 0.68 Rust book, 0.74 TIL) are two pieces of evidence. Tuned on
# SciFact train and the paraphrase sets (docs/ranking.md "Round 4").
ALIKE_FROM = 0.7
ALIKE_AT = 0.9

# (best chunk id, next chunk id) -> the cosine of their vectors, None when either has none
Alike = Callable[[str, str], float | None]


def independence(cosine: float | None, alike_from: float = ALIKE_FROM, alike_at: float = ALIKE_AT) -> float:
    """How much of the next passage counts: 1 below `alike_from`, 0 from `alike_at`, linear between."""
    if cosine is None:
        return 1.0
    return min(1.0, max(0.0, (alike_at - cosine) / (alike_at - alike_from)))


def aggregate_notes(fused: list[Fused], share: float = NEXT_SHARE, alike: Alike | None = None) -> list[Fused]:
    """Each note's best chunk plus `share` × its next-best chunk's score, as a named term; best first.

    With `alike`, the next passage counts as far as it is independent evidence: a
    chunk that repeats the best one (a long paragraph cut in two) adds less, down to
    nothing (`independence`), and the term says how alike they were.
    """
    if share <= 0:
        return fused
    order = sorted(fused, key=lambda f: (-f.score, *id_order(f.chunk_id)))
    best: dict[tuple[str, str], int] = {}
    second: dict[tuple[str, str], Fused] = {}
    for i, f in enumerate(order):
        rel, _, vault = id_order(f.chunk_id)
        key = (vault, rel)
        if key not in best:
            best[key] = i
        elif key not in second:
            second[key] = f
    out = list(order)
    for key, nxt in second.items():
        i = best[key]
        term = _next_term(order[i].chunk_id, nxt, share, alike)
        if term is not None:
            out[i] = Fused(out[i].chunk_id, out[i].score + term.value, out[i].terms + (term,))
    out.sort(key=lambda f: (-f.score, *id_order(f.chunk_id)))
    return out


def _next_term(best_id: str, nxt: Fused, share: float, alike: Alike | None) -> Term | None:
    """The named share of the next passage, scaled by how independent of the best one it is."""
    if alike is None:
        return Term(f"note's next passage ({share:g} × {nxt.score:.2f})", share * nxt.score)
    cosine = alike(best_id, nxt.chunk_id)
    part = independence(cosine, ALIKE_FROM, ALIKE_AT)
    if part <= 0:
        return None
    said = "" if cosine is None else f", alike {cosine:.2f} → ×{part:.2f}"
    return Term(f"note's next passage ({share:g} × {nxt.score:.2f}{said})", share * part * nxt.score)


def side_alike(sides: Sequence[VaultSearchSide]) -> Alike:
    """`alike` for `aggregate_notes` over the searched vaults: two chunks' cosine from their vault's vectors."""
    by_name = {s.name: s for s in sides}

    def alike(a: str, b: str) -> float | None:
        side = by_name.get(split_chunk_id(a)[0])
        if side is None or side.vectors is None:
            return None
        found = side.vectors.chunk_vectors([a, b])
        if a not in found or b not in found:
            return None
        va, vb = found[a], found[b]
        norms = float((va @ va) * (vb @ vb)) ** 0.5
        return float(va @ vb) / norms if norms > 0 else None

    return alike


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
