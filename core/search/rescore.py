"""The shortlist's final shaping: text re-scoring, one row per note, snippets and guards.

Split from `core.search.search` so that module keeps the request flow (parse,
both lists, fusion) and this one holds the rules that move hits *after* fusion:
each is a named `Term` on the hit, so the score-breakdown panel can show why a
hit rose or fell, and each is testable on hand-made `Hit`s without an index.
"""

from __future__ import annotations

from dataclasses import replace

from core.base.models import Hit, Term, id_order
from core.index.analysis import Stemmer
from core.search.fusion import Fused
from core.search.guardrails import injection_risk, mask_secrets
from core.search.signals import link_share, terms_present
from core.search.snippets import make_snippet

RISK_PENALTY = 0.5  # a chunk that reads like a prompt injection loses up to half its score
MORE_PER_NOTE = 5  # passages folded under a note's row, past the per-note cap
EXACT_MARGIN = 1e-4  # how far above the best related-only hit an exact hit is lifted


def shortlist(fused: list[Fused], k: int, cap: int) -> list[Fused]:
    """The first `k` rows after the per-note cap, in the final order, plus passages to fold into them.

    Up to MORE_PER_NOTE further chunks of a note past its cap are kept too, so
    the row can offer "n more passages in this note".
    """
    ordered = sorted(fused, key=lambda f: (-f.score, *id_order(f.chunk_id)))
    counts: dict[tuple[str, str], int] = {}
    out = []
    rows = 0
    for f in ordered:
        rel, _, vault = id_order(f.chunk_id)
        seen = counts[(vault, rel)] = counts.get((vault, rel), 0) + 1
        if cap <= 0 or seen <= cap:
            if rows >= k:
                break
            rows += 1
            out.append(f)
        elif seen <= cap + MORE_PER_NOTE:
            out.append(f)
    return out




def rescore(hits: list[Hit], stems: frozenset[str], stemmer: Stemmer) -> list[Hit]:
    """Text signals on the shortlist, each a named term: link-heavy chunks fall, exact hits rise.

    * **Mostly links**: a chunk that is mostly links (a README index, a map of
      content) is multiplied down (see :func:`link_share`), so it cannot crowd
      out the notes it lists.
    * **Exact beats vague**: a keyword hit holding every query word is lifted
      just above the best vector-only hit that holds none of them, so a rare
      word the user typed is never outranked by a merely related note.
    """
    out: list[Hit] = []
    for h in hits:
        links = link_share(h.text)
        if links.factor < 1.0:
            term = Term(links.label, h.score * (links.factor - 1.0))
            h = replace(h, score=h.score + term.value, contributions=h.contributions + (term,))
        out.append(h)
    ceiling = _best_vague_score(out, stems, stemmer) if stems else None
    if ceiling is not None:
        for i, h in enumerate(out):
            if h.bm25 is not None and h.score <= ceiling and terms_present(f"{h.title}\n{h.text}", stems, stemmer, need_all=True) == stems:
                term = Term("has every query word → above related-only notes", ceiling - h.score + EXACT_MARGIN)
                out[i] = replace(h, score=h.score + term.value, contributions=h.contributions + (term,))
    out.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return out


def _best_vague_score(hits: list[Hit], stems: frozenset[str], stemmer: Stemmer) -> float | None:
    """The score of the best vector-only hit that holds none of the query's words, if any."""
    for h in sorted((h for h in hits if h.bm25 is None), key=lambda h: -h.score):
        if not terms_present(f"{h.title}\n{h.text}", stems, stemmer):
            return h.score
    return None


def guard(hits: list[Hit], stems: frozenset[str], stemmer: Stemmer, *, resort: bool, phrases: tuple[str, ...] = ()) -> list[Hit]:
    """Snippets (secrets masked) for what is shown; injection-like chunks flagged and ranked down."""
    out = []
    for h in hits:
        risk = injection_risk(h.text)
        # Masked before the window is cut: a window inside a key block would miss its BEGIN line.
        snippet = mask_secrets(make_snippet(mask_secrets(h.text).text, stems, stemmer, lang=h.lang or None, phrases=phrases)).text
        if h.more:
            more = tuple(
                replace(m, snippet=mask_secrets(make_snippet(mask_secrets(m.text).text, stems, stemmer, lang=m.lang or None, phrases=phrases)).text)
                for m in h.more
            )
            h = replace(h, more=more)
        if risk.flags:
            penalty = Term(f"injection risk penalty ({', '.join(risk.flags)}; risk {risk.score:.2f})", -RISK_PENALTY * risk.score * h.score)
            h = replace(h, score=h.score + penalty.value, contributions=h.contributions + (penalty,), flags=risk.flags)
        out.append(replace(h, snippet=snippet))
    if resort:
        out.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return out


def cap_per_note(hits: list[Hit], cap: int) -> list[Hit]:
    """Keep at most `cap` rows per note; the note's further passages ride along in its last row's `more`.

    The app shows one row per note with "n more passages in this note" that
    expands to them, so nothing found is lost by folding.
    """
    if cap <= 0:
        return hits
    rows: dict[tuple[str, str], list[int]] = {}
    extra: dict[int, list[Hit]] = {}
    out: list[Hit] = []
    for h in hits:
        key = (h.chunk.vault, h.chunk.rel_path)
        kept = rows.setdefault(key, [])
        if len(kept) < cap:
            kept.append(len(out))
            out.append(h)
        else:
            extra.setdefault(kept[-1], []).append(h)
    for pos, more in extra.items():
        out[pos] = replace(out[pos], more=tuple(more))
    return out
