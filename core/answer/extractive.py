"""The offline answer: the passage of the top notes that answers the question, quoted verbatim.

No language model is involved, so nothing is paraphrased and nothing invented.
Candidate units (sentences, list items, table rows, code blocks with their
introducing sentence) are scored against the question by meaning (the shipped
embedding model, when at hand) and by the question's key words, weighted by how
rare each word is in the vault: "squash" says more than "git". The top-ranked
note's best unit is preferred over many notes' weak ones.

The same scores decide whether to answer at all: the best unit (with its
heading and note title) must cover the question's key words, or be very close in
meaning; otherwise the notes do not say, and the closest notes are offered as
"related" instead of quotes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.answer.context import question_stems, stems
from core.answer.models import Quote, Source
from core.answer.units import CODE, ITEM, ROW, Unit, split_units
from core.search.guardrails import mask_secrets
from core.vault.display_text import passage

MAX_SOURCES = 5
MAX_UNITS = 64
MAX_QUOTES = 3
EMBED_CHARS = 360
EMBED_LIMIT = 24
LEXICAL_CHARS = 300
# Answerability, calibrated on tests/golden/ask-real.yaml (simonw-til) and checked on the held-back
# tests/golden/ask-real-tldr.yaml: answer when the best unit covers enough of the question's
# rarity-weighted key words, or when it is very close in meaning.
MIN_COVERAGE = 0.6
MIN_SIMILARITY = 0.62
LABEL = "From your notes (extractive answer: no language model configured):"
NOT_SAID = "Your notes don't say."

Embed = Callable[[list[str]], np.ndarray]
# "How do I ..." is answered by what to type: a command, a snippet, a setting.
PROCEDURAL = re.compile(
    r"(?i)^\s*(how\b|which\s+(command|option|flag|setting|function)|what\s+(command|option|flag|setting|syntax))"
    r"|\b(command|syntax|snippet|recipe)\b"
)
_INLINE_CODE = re.compile(r"`[^`]+`")
# Code in text without backticks (PDFs, plain text): a call `attach()` / `prod(svd(M)$d)`, an R
# assignment `x <- f`, a `$` member, a long option `--with-blas`.
_CODE_LIKE = re.compile(r"(?<![\w(])[A-Za-z_.][\w.]*\([^()\s]*(?:\([^()]*\)[^()\s]*)?\)|\s<<?-\s|\w\$\w|(?<!\S)--[a-z][\w-]+")
# A question's operator or symbol ("the ... argument", "<<-"): no word stem carries it.
_SYMBOL = re.compile(r"(?<!\S)[^\w\s]{2,}(?!\S)")
TEMPLATE_PENALTY = 0.5
# A unit's words score, calibrated with MIN_COVERAGE on the same golden sets: its own words'
# coverage counts most, title and heading help, the retriever's rank a little, and earlier
# units in a chunk win ties.
OWN_WORDS_WEIGHT = 0.5
WITH_HEADINGS_WEIGHT = 0.25
RETRIEVER_WEIGHT = 0.15
POSITION_COST = 0.002
CODE_BONUS, CODE_IN_TEXT_BONUS = 0.2, 0.1  # for a how-to question: a code block, or code inside a sentence
# A runner-up is quoted beside the best unit when it scores this close: from the same note, or another.
SAME_NOTE_CLOSE, OTHER_NOTE_CLOSE = 0.8, 0.95
MIN_RUNNER_UP_SIMILARITY = 0.5  # a runner-up sharing no key word must at least be this close in meaning
_IDENT_SEP = re.compile(r"[_\W]+")
_MNEMONIC = re.compile(r"(?<=\w)\[(\w{1,3})\]|\[(?=\w{1,3}\]\w)(\w{1,3})\]")


def _words(text: str) -> set[str]:
    """The text's terms, and those of its identifiers' parts: `api_key` also says "api" and "key".

    Bracketed letters inside words ("Lis[t] the contents of a tar [f]ile", tldr's mnemonics) are
    read as the plain word.
    """
    text = _MNEMONIC.sub(lambda m: m.group(1) or m.group(2), text)
    return stems(text) | stems(_IDENT_SEP.sub(" ", text))


def _form_bonus(unit: Unit, procedural: bool) -> float:
    """A passage holding code answers a how-to question better than one that restates it."""
    if not procedural:
        return 0.0
    if unit.kind == CODE:
        return CODE_BONUS
    return CODE_IN_TEXT_BONUS if has_code(unit) else 0.0


def has_code(unit: Unit) -> bool:
    """Code in the unit: a block, an inline span, or an expression typed without backticks (PDF text)."""
    return unit.kind == CODE or bool(_INLINE_CODE.search(unit.text) or _CODE_LIKE.search(unit.text))


def _templates(units: Sequence[tuple[Unit, Source, int]]) -> set[str]:
    """Sentences found word for word in more than one source: a licence notice or footer, not an answer.

    Manuals of one project share their front matter ("Permission is granted to copy ..."), which
    matches any question about licences or copying better than the one sentence that answers it.
    """
    seen: dict[str, set[str]] = {}
    for unit, source, _ in units:
        seen.setdefault(unit.text, set()).add(source.rel_path)
    return {text for text, paths in seen.items() if len(paths) > 1}


@dataclass(frozen=True, slots=True)
class Scored:
    """A unit of one chunk of one source, with the reasons for its score."""

    unit: Unit
    source: Source
    hit_index: int  # which of the source's chunks it came from
    similarity: float
    text_coverage: float  # weighted share of key words in the unit itself
    coverage: float  # ... in the unit, its heading and its note's title
    score: float


@dataclass(frozen=True, slots=True)
class Extracted:
    answer: str
    quotes: tuple[Quote, ...]
    abstained: bool
    reason: str  # why it answered or not, for the debug view
    best: Scored | None


def term_weights(terms: set[str], doc_freq: Mapping[str, int] | None, n_docs: int) -> dict[str, float]:
    """IDF weights; without frequencies every key word weighs the same."""
    if not doc_freq or n_docs <= 0:
        return {t: 1.0 for t in terms}
    return {t: math.log(1 + (n_docs + 1) / (doc_freq.get(t, 0) + 1)) for t in terms}


def _coverage(have: set[str], weights: Mapping[str, float]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in have) / total if total else 0.0


def candidates(sources: Sequence[Source]) -> list[tuple[Unit, Source, int]]:
    """Units of the top sources' chunks, each chunk split on its own so a unit knows its heading."""
    out: list[tuple[Unit, Source, int]] = []
    for source in sources[:MAX_SOURCES]:
        for index, hit in enumerate(source.hits):
            for unit in split_units(mask_secrets(hit.text).text):
                out.append((unit, source, index))
    return out[:MAX_UNITS]


def score_units(
    question: str,
    sources: Sequence[Source],
    embed: Embed | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[Scored]:
    """Every candidate unit with its similarity, coverage and final score, best first."""
    units = candidates(sources)
    if not units:
        return []
    wanted = question_stems(question) or stems(question)
    weights = dict(weights) if weights else term_weights(wanted, None, 0)
    weights = {t: weights.get(t, 1.0) for t in wanted}
    procedural = bool(PROCEDURAL.search(question))
    top_score = max((h.score for s in sources for h in s.hits), default=0.0) or 1.0
    # An operator the question names is a key word as rare as its rarest word.
    symbols = set(_SYMBOL.findall(question))
    weights |= {sym: max(weights.values(), default=1.0) for sym in symbols}
    templates = _templates(units)
    lexical: list[tuple[float, float, float]] = []  # (text coverage, coverage, words-only score)
    for unit, source, index in units:
        hit = source.hits[index]
        # A long code block's tail would cover any question: only its head and lead count as words.
        head = f"{unit.lead} {unit.intro} {unit.text[:LEXICAL_CHARS]}"
        own = _words(head) | {sym for sym in symbols if sym in head}
        around = _words(f"{hit.title} {hit.chunk.heading_path}")
        text_cov = _coverage(own, weights)
        cov = _coverage(own | around, weights)
        prior = RETRIEVER_WEIGHT * (hit.score / top_score)  # the retriever's judgement of the note
        words = OWN_WORDS_WEIGHT * text_cov + WITH_HEADINGS_WEIGHT * cov + prior + _form_bonus(unit, procedural) - POSITION_COST * unit.position
        if unit.text in templates:
            words -= TEMPLATE_PENALTY
        lexical.append((text_cov, cov, words))
    similarity = [0.0] * len(units)
    if embed is not None:
        # The model reads only the most promising units by words and rank: it is the slow part.
        order = sorted(range(len(units)), key=lambda i: -lexical[i][2])[:EMBED_LIMIT]
        vectors = np.asarray(embed([question] + [_embed_text(*units[i]) for i in order]))
        for i, v in zip(order, vectors[1:]):
            similarity[i] = float(v @ vectors[0])
    scored: list[Scored] = []
    for (unit, source, index), sim, (text_cov, cov, words_score) in zip(units, similarity, lexical):
        scored.append(Scored(unit, source, index, sim, text_cov, cov, sim + words_score))
    scored.sort(key=lambda s: -s.score)
    return scored


def _embed_text(unit: Unit, source: Source, index: int) -> str:
    hit = source.hits[index]
    head = hit.chunk.heading_path or hit.title
    text = f"{head}: {unit.lead or unit.intro} {unit.text}"
    return text[:EMBED_CHARS]


def answerable(best: Scored, has_embedder: bool) -> tuple[bool, str]:
    """The best unit must cover the key words, or (with the model) mean nearly the same."""
    if best.coverage >= MIN_COVERAGE:
        return True, f"key words covered {best.coverage:.0%} ≥ {MIN_COVERAGE:.0%}"
    if has_embedder and best.similarity >= MIN_SIMILARITY:
        return True, f"similarity {best.similarity:.2f} ≥ {MIN_SIMILARITY}"
    return False, f"key words covered {best.coverage:.0%}, similarity {best.similarity:.2f}"


def pick(scored: Sequence[Scored], procedural: bool = False) -> list[Scored]:
    """The best unit, plus close runners-up from the same note; another note only if nearly as good.

    For a how-to question (`procedural`), a best sentence without code brings the next sentence
    when that one shows the code: in a PDF "A useful facility would be ... visible as variables"
    is followed by "The attach() function takes ...", the answer itself.
    """
    best = scored[0]
    picked = [best]
    for s in scored[1:]:
        if len(picked) >= MAX_QUOTES:
            break
        same_note = s.source.rel_path == best.source.rel_path
        close = SAME_NOTE_CLOSE if same_note else OTHER_NOTE_CLOSE
        if s.score < close * best.score or s.text_coverage == 0 and s.similarity < MIN_RUNNER_UP_SIMILARITY:
            continue
        if any(p.unit.text == s.unit.text for p in picked):
            continue
        picked.append(s)
    follower = _introduced_code(best, scored, procedural)
    if follower is not None and follower not in picked:
        picked = [p for p in picked if p is not best] if len(picked) >= MAX_QUOTES else picked
        picked.append(follower)
    # A code block, row or item renders its intro (sentence, header, lead-in): it need not be quoted twice.
    intros = {(p.source.number, p.hit_index, p.unit.intro) for p in picked if p.unit.intro}
    picked = [p for p in picked if (p.source.number, p.hit_index, p.unit.text) not in intros or p.unit.intro]
    return sorted(picked, key=lambda s: (s.source.number, s.hit_index, s.unit.position))


def _introduced_code(best: Scored, scored: Sequence[Scored], procedural: bool = False) -> Scored | None:
    """The code right after the best sentence ("..., like this:"): the sentence alone is no answer.

    A code block always follows; for a how-to question, so does a sentence holding code typed
    without backticks, as PDF text has no fences.
    """
    if best.unit.kind == CODE:
        return None
    wants_code_sentence = procedural and not has_code(best.unit)
    for s in scored:
        same_chunk = s.source.number == best.source.number and s.hit_index == best.hit_index
        if not same_chunk or s.unit.position != best.unit.position + 1:
            continue
        if s.unit.kind == CODE or wants_code_sentence and _CODE_LIKE.search(s.unit.text):
            return s
    return None


def to_quote(s: Scored) -> Quote:
    hit = s.source.hits[s.hit_index]
    return Quote(
        number=s.source.number,
        text=s.unit.text,
        kind=s.unit.kind,
        rel_path=s.source.rel_path,
        heading_path=hit.chunk.heading_path,
        chunk_ordinal=hit.chunk.ordinal,
        start_byte=hit.start_byte,
        end_byte=hit.end_byte,
        language=s.unit.language,
        intro=s.unit.intro,
        score=round(s.score, 4),
    )


def row_with_header(row: str, header: str) -> str:
    """A table row read with its header: "Plan: Sync Standard; Total storage: 1 GB" (cells paired by position).

    When the cells do not pair up (a pipe inside a cell), the header and the row are shown one after the other.
    """
    names = [c.strip() for c in header.split("|")]
    cells = [c.strip() for c in row.split("|")]
    if len(names) != len(cells):
        return f"{passage(header, row=True)} → {passage(row, row=True)}"
    return "; ".join(f"{passage(n)}: {passage(c)}" if n else passage(c) for n, c in zip(names, cells, strict=True))


def render(quotes: Sequence[Quote]) -> str:
    """Markdown: prose as list lines, code verbatim in a fence with its language, each cited.

    Prose shows its display text (`core.vault.display_text`: link labels, callouts, table rows
    as read); the quote itself stays verbatim in `Quote.text`, so it can still be checked
    against the note.
    """
    lines = [LABEL, ""]
    for q in quotes:
        if q.kind == CODE:
            if q.intro:
                lines.append(f"- {passage(q.intro)} [{q.number}]")
            fence = "````" if "```" in q.text else "```"
            lines.extend([f"{fence}{q.language}", q.text, fence, ""])
            if not q.intro:
                lines.insert(len(lines) - 1, f"[{q.number}]")
        elif q.kind == ROW and q.intro:
            lines.append(f"- {row_with_header(q.text, q.intro)} [{q.number}]")
        elif q.kind == ITEM and q.intro:
            lines.append(f"- {passage(q.intro)} [{q.number}]")
            lines.append(f"  - {passage(q.text)}")
        else:
            lines.append(f"- {passage(q.text, row=q.kind == ROW)} [{q.number}]")
    return "\n".join(lines).rstrip() + "\n"


def extract(
    question: str,
    sources: Sequence[Source],
    embed: Embed | None = None,
    weights: Mapping[str, float] | None = None,
) -> Extracted:
    """Answer from the units, or abstain with the reason."""
    scored = score_units(question, sources, embed, weights)
    if not scored:
        return Extracted(NOT_SAID, (), True, "the matching notes hold nothing quotable", None)
    best = scored[0]
    ok, why = answerable(best, embed is not None)
    if not ok:
        return Extracted(NOT_SAID, (), True, why, best)
    quotes = tuple(to_quote(s) for s in pick(scored, bool(PROCEDURAL.search(question))))
    return Extracted(render(quotes), quotes, False, why, best)


def extract_answer(question: str, sources: Sequence[Source], max_sentences: int = 4, embed: Embed | None = None) -> str:
    """The answer text alone (kept for callers of the first version)."""
    return extract(question, sources, embed).answer
