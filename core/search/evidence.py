"""How far to trust the keyword list for one query, and the blend weights that follow from it.

A paraphrased question ("put away an old project") shares only everyday words
with the note that answers it: the keyword list then ranks whatever holds those
words, with a flat score curve, while the vector list found the note by meaning.
A look-up ("execute_write_fn commit") is the opposite: one rare word, one note
far ahead of the rest. The keyword side's evidence is read from three signals,
each in [0, 1]:

* **rarity** — the query's idf mass the vault holds: the mean, over the query's
  words, of each word's idf as a share of the largest possible idf (a word the
  vault lacks counts 0). Only common words matched → low.
* **peak** — how far the best keyword score stands above the one a few ranks
  down. A flat curve means no chunk stands out → low.
* **agreement** — the share of the keyword list's first notes that the vector
  list also ranks high. Both sides pointing at the same notes → high.

Their weighted mean is the evidence *strength*; the blend's keyword share moves
with it around the user's (or profile's) share, and the breakdown names it:
"keyword evidence weak (0.21) → semantic weight 0.75".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RARITY_WEIGHT = 0.4
PEAK_WEIGHT = 0.3
AGREEMENT_WEIGHT = 0.3
RARITY_FULL = 0.5  # a mean idf share at or above this counts as fully rare
PEAK_RANK = 5  # the best keyword score is compared with the one at this rank
AGREE_TOP = 3  # keyword notes checked against the vector side
AGREE_DEPTH = 10  # ... which must rank them within this many notes
PIVOT = 0.5  # evidence strength at which the base share is kept
SLOPE = 0.2  # share moved per unit of strength away from the pivot (0.6 and 0.3 cost recall; see docs/ranking.md)
SHARE_RANGE = (0.2, 0.8)  # the keyword share never leaves this range
WEAK_BELOW = 0.4
STRONG_ABOVE = 0.6


@dataclass(frozen=True, slots=True)
class KeywordEvidence:
    """The keyword list's evidence for one query; each part and the strength in [0, 1]."""

    rarity: float
    peak: float
    agreement: float

    @property
    def strength(self) -> float:
        return round(RARITY_WEIGHT * self.rarity + PEAK_WEIGHT * self.peak + AGREEMENT_WEIGHT * self.agreement, 4)

    @property
    def label(self) -> str:
        s = self.strength
        return "weak" if s < WEAK_BELOW else "strong" if s > STRONG_ABOVE else "moderate"


def idf_share(df: int, doc_count: int) -> float:
    """A word's idf as a share of the largest idf the vault allows (a word in one chunk → ~1; in all → ~0)."""
    if doc_count <= 0 or df <= 0:
        return 0.0
    top = math.log(1 + doc_count / 1)
    return min(1.0, math.log(1 + doc_count / df) / top) if top > 0 else 0.0


def rarity(dfs: Mapping[str, int], doc_count: int) -> float:
    """The query's idf mass the vault holds, scaled so RARITY_FULL and above read as 1."""
    if not dfs:
        return 0.0
    mean = sum(idf_share(df, doc_count) for df in dfs.values()) / len(dfs)
    return min(1.0, mean / RARITY_FULL)


def peak(scores: Sequence[float], at: int = PEAK_RANK) -> float:
    """1 − score@at / score@1 over a best-first list; 0 for an empty or flat list, 1 for a lone hit."""
    if not scores or scores[0] <= 0:
        return 0.0
    if len(scores) < 2:
        return 1.0
    other = scores[min(at, len(scores)) - 1]
    return max(0.0, min(1.0, 1.0 - other / scores[0]))


def agreement(keyword_notes: Sequence[str], vector_notes: Sequence[str], top: int = AGREE_TOP, depth: int = AGREE_DEPTH) -> float:
    """The share of the keyword list's first `top` notes found in the vector list's first `depth` notes."""
    first = list(dict.fromkeys(keyword_notes))[:top]
    if not first:
        return 0.0
    near = set(list(dict.fromkeys(vector_notes))[:depth])
    return sum(1 for n in first if n in near) / len(first)


def keyword_evidence(
    dfs: Mapping[str, int], doc_count: int, scores: Sequence[float], keyword_notes: Sequence[str], vector_notes: Sequence[str]
) -> KeywordEvidence:
    """The three signals for one query (see the module docstring)."""
    return KeywordEvidence(
        rarity=round(rarity(dfs, doc_count), 4),
        peak=round(peak(scores), 4),
        agreement=round(agreement(keyword_notes, vector_notes), 4) if vector_notes else 1.0,
    )


def adapted_share(base: float, evidence: KeywordEvidence) -> float:
    """The blend's keyword share for this query: the base share moved with the evidence, within SHARE_RANGE."""
    lo, hi = SHARE_RANGE
    return round(min(hi, max(lo, base + SLOPE * (evidence.strength - PIVOT))), 4)


def explain(evidence: KeywordEvidence, share: float) -> str:
    """The breakdown's words for the weighting: "keyword evidence weak (0.21) → semantic weight 0.75"."""
    side = f"semantic weight {1 - share:.2f}" if share < 0.5 else f"keyword weight {share:.2f}"
    parts = f"rarity {evidence.rarity:.2f}, peak {evidence.peak:.2f}, agreement {evidence.agreement:.2f}"
    return f"keyword evidence {evidence.label} ({evidence.strength:.2f}: {parts}) → {side}"
