"""Answer evaluation: does the answer hold the expected snippet, abstain when it should, cite the right section?

Three figures decide whether "Ask my notes" works on a real vault:

* answered: share of answerable cases whose answer contains an expected snippet (code included);
* abstained: share of unanswerable cases answered with "your notes don't say";
* quotes in section: share of quoted passages found verbatim in the note, inside the cited
  chunk, under the heading the citation names (re-chunking the note from disk, so a label
  that drifted to a neighbouring section fails).
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.answer import Answerer, AskRequest
from core.answer.models import AskResponse, Quote
from core.base.errors import CairnError
from core.base.models import Chunk
from core.eval.golden import AskCase
from core.vault.attachments import AttachmentSource, attachment_kind, text_document, units_document
from core.vault.chunker import chunk_markdown
from core.vault.frontmatter import parse_front_matter
from core.vault.notes import BOM
from core.vault.pdf import PdfProblem
from core.vault.readers import extract


@dataclass(frozen=True, slots=True)
class AskCaseResult:
    case_id: str
    question: str
    abstained: bool
    abstain_correct: bool
    cited: tuple[str, ...]
    citation_precision: float | None  # share of cited notes among the expected ones
    forbidden_found: tuple[str, ...]
    first_token_ms: float | None
    error: str | None
    expect_abstain: bool = False
    answer_contains_expected: bool | None = None  # None: the case names no expected snippet
    quotes: int = 0
    quotes_in_section: int = 0
    problems: tuple[str, ...] = ()
    expected_retrieved: bool | None = None  # an expected note was among the sources the answer was built from

    @property
    def passed(self) -> bool:
        return (
            self.abstain_correct
            and not self.forbidden_found
            and self.answer_contains_expected is not False
            and self.quotes == self.quotes_in_section
        )


@dataclass(frozen=True, slots=True)
class AskEvalReport:
    provider: str
    cases: tuple[AskCaseResult, ...]
    citation_precision: float | None
    abstention_accuracy: float | None
    forbidden_claims: int
    first_token_p50_ms: float | None
    answered_rate: float | None = None  # answerable cases whose answer holds an expected snippet
    abstain_rate: float | None = None  # unanswerable cases that abstained
    quotes_in_section_rate: float | None = None
    retrieved_rate: float | None = None  # answerable cases with an expected note among the sources

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def normalise(text: str) -> str:
    """Lower case, one space: a snippet matches however the answer wraps or indents it."""
    return " ".join(text.lower().split())


def contains_expected(answer: str, expected: Sequence[str]) -> bool:
    flat = normalise(answer)
    return any(normalise(e) in flat for e in expected)


_LINE_MARK = re.compile(r"^\s*(?:>\s?)*(?:(?:[-*+]|\d+[.)])\s+)?", re.MULTILINE)


def quote_in_section(quote: Quote, root: Path | None) -> str | None:
    """None when the quote is verbatim inside its cited chunk and under its heading; else why not."""
    if root is None:
        return None
    try:
        chunks = _chunks_on_disk(root, quote.rel_path)
    except OSError as exc:
        return f"cannot read {quote.rel_path}: {exc}"
    except PdfProblem as exc:
        return f"cannot read {quote.rel_path}: {exc}"
    flat_quote = _flat(quote.text)
    holding = [c for c in chunks if flat_quote and flat_quote in _flat(c.text)]
    for chunk in holding:
        inside = chunk.start_byte < quote.end_byte and quote.start_byte < chunk.end_byte
        if chunk.heading_path == quote.heading_path and inside:
            return None
    if any(c.heading_path == quote.heading_path for c in holding):
        return f"quote found under {quote.heading_path!r} but outside the cited bytes"
    if holding:
        return f"quote labelled {quote.heading_path!r} sits under {holding[0].heading_path!r}"
    return f"quote not found verbatim in {quote.rel_path}: {quote.text[:60]!r}"


def _chunks_on_disk(root: Path, rel_path: str) -> Sequence[Chunk]:
    """The file's chunks as the indexer makes them today: a note re-chunked from its bytes; a
    PDF re-extracted (its offsets index the extracted text, not the file); a `.txt` re-read."""
    path = root / rel_path
    kind = attachment_kind(rel_path)
    if kind is None:
        raw = path.read_bytes()
        body_start = parse_front_matter(raw, len(BOM) if raw.startswith(BOM) else 0).end_byte
        return chunk_markdown(raw, body_start).chunks
    src = AttachmentSource("", rel_path, path, 0, 0, "", "internal")
    if kind != "txt":
        return _extracted_chunks(src, kind)
    return text_document(src, path.read_bytes()).chunks


@functools.lru_cache(maxsize=8)
def _extracted_chunks(src: AttachmentSource, kind: str) -> tuple[Chunk, ...]:
    # In this process, without the extraction child: an evaluation runs on files the index already read.
    return units_document(src, extract(kind, src.path)).chunks


def _flat(text: str) -> str:
    """Markdown's line prefixes (list marks, quote marks) are layout, not words."""
    return normalise(_LINE_MARK.sub("", text))


def run_ask_cases(
    answerer: Answerer, cases: Sequence[AskCase], vault: str | None = None, root: Path | None = None
) -> AskEvalReport:
    """Ask every case; `root` is the vault folder for the quote check (None skips it)."""
    if root is None and vault is not None:
        try:
            root = Path(answerer.engine.vault(vault).root)
        except CairnError:  # an unknown vault was already reported by the caller
            root = None
    results = [_run_case(answerer, case, vault, root) for case in cases]
    precisions = [r.citation_precision for r in results if r.citation_precision is not None]
    latencies = [r.first_token_ms for r in results if r.first_token_ms is not None]
    answerable = [r for r in results if r.answer_contains_expected is not None and not r.expect_abstain]
    unanswerable = [r for r in results if r.expect_abstain]
    quotes = sum(r.quotes for r in results)
    return AskEvalReport(
        provider=answerer.provider_id,
        cases=tuple(results),
        citation_precision=round(sum(precisions) / len(precisions), 4) if precisions else None,
        abstention_accuracy=round(sum(r.abstain_correct for r in results) / len(results), 4) if results else None,
        forbidden_claims=sum(len(r.forbidden_found) for r in results),
        first_token_p50_ms=round(statistics.median(latencies), 2) if latencies else None,
        answered_rate=_rate(sum(bool(r.answer_contains_expected) for r in answerable), len(answerable)),
        abstain_rate=_rate(sum(r.abstained for r in unanswerable), len(unanswerable)),
        quotes_in_section_rate=_rate(sum(r.quotes_in_section for r in results), quotes),
        retrieved_rate=_rate(sum(bool(r.expected_retrieved) for r in answerable), len(answerable)),
    )


def _run_case(answerer: Answerer, case: AskCase, vault: str | None, root: Path | None) -> AskCaseResult:
    resp: AskResponse = answerer.ask(AskRequest(case.question, vaults=(vault,) if vault else ()))
    cited = tuple(dict.fromkeys(r.rel_path for r in resp.references))
    expected = set(case.expected_sources)
    precision = None if not cited or not expected else sum(1 for c in cited if c in expected) / len(cited)
    lowered = resp.answer.lower()
    forbidden = tuple(c for c in case.forbidden_claims if c.lower() in lowered)
    problems = [p for p in (quote_in_section(q, root) for q in resp.quotes) if p]
    has_expected = None
    if case.expected_answer:
        has_expected = not resp.abstained and contains_expected(resp.answer, case.expected_answer)
        if not has_expected:
            problems.append("answer lacks " + " / ".join(repr(e) for e in case.expected_answer))
    return AskCaseResult(
        case.id,
        case.question,
        resp.abstained,
        resp.abstained == case.expect_abstain,
        cited,
        precision,
        forbidden,
        resp.first_token_ms,
        resp.error,
        expect_abstain=case.expect_abstain,
        answer_contains_expected=has_expected,
        quotes=len(resp.quotes),
        quotes_in_section=len(resp.quotes) - sum(1 for q in resp.quotes if quote_in_section(q, root)),
        problems=tuple(problems),
        expected_retrieved=bool(expected & {s.rel_path for s in resp.sources}) if expected else None,
    )


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None
