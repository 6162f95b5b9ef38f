"""A query in one language is not drowned by pages in another.

A vault may hold the same material in several languages (the tldr pages in
English, Chinese, Japanese and German). The query is analysed in every language
the vault holds, so an English query also matches German pages through shared
words ("tar", "Archiv" ~ "archive", "system") and a short German page can come
first. When the query's language is plain (its script, or one language's
function words) and the shortlist mixes languages, each hit in that language
gains a small, named bonus in RRF units: enough to put the page in the user's
language ahead of a foreign one that matched about as well, too small to lift a
weak match over a strong one. A single-language result list is untouched.
"""

from __future__ import annotations

from dataclasses import replace

from core.base.models import Hit, Term
from core.vault.language import confident_query_language

#: RRF units: about three ranks near the top of one list (1/61 - 1/64 = 0.0008), well under one strong keyword match.
SAME_LANGUAGE_BONUS = 0.001


def prefer_query_language(hits: list[Hit], query: str, bonus: float | None = None) -> list[Hit]:
    """`hits` with the bonus added to those in the query's language, re-sorted; unchanged when it does not apply."""
    bonus = SAME_LANGUAGE_BONUS if bonus is None else bonus
    lang = confident_query_language(query)
    if not lang or bonus <= 0:
        return hits
    langs = {h.lang for h in hits if h.lang}
    if lang not in langs or len(langs) < 2:
        return hits
    term = Term(f"in the query's language ({lang})", bonus)
    out = [replace(h, score=h.score + bonus, contributions=h.contributions + (term,)) if h.lang == lang else h for h in hits]
    out.sort(key=lambda h: (-h.score, h.chunk.rel_path, h.chunk.ordinal, h.chunk.vault))
    return out
