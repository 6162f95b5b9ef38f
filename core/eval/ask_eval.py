"""Answer evaluation: citation precision, abstention accuracy, forbidden claims, first-token latency."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.answer import Answerer, AskRequest
from core.eval.golden import AskCase


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


@dataclass(frozen=True, slots=True)
class AskEvalReport:
    provider: str
    cases: tuple[AskCaseResult, ...]
    citation_precision: float | None
    abstention_accuracy: float | None
    forbidden_claims: int
    first_token_p50_ms: float | None

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def run_ask_cases(answerer: Answerer, cases: Sequence[AskCase], vault: str | None = None) -> AskEvalReport:
    results = []
    for case in cases:
        resp = answerer.ask(AskRequest(case.question, vaults=(vault,) if vault else ()))
        cited = tuple(dict.fromkeys(r.rel_path for r in resp.references))
        expected = set(case.expected_sources)
        precision = None if not cited or not expected else sum(1 for c in cited if c in expected) / len(cited)
        lowered = resp.answer.lower()
        forbidden = tuple(c for c in case.forbidden_claims if c.lower() in lowered)
        results.append(
            AskCaseResult(
                case.id,
                case.question,
                resp.abstained,
                resp.abstained == case.expect_abstain,
                cited,
                precision,
                forbidden,
                resp.first_token_ms,
                resp.error,
            )
        )
    precisions = [r.citation_precision for r in results if r.citation_precision is not None]
    latencies = [r.first_token_ms for r in results if r.first_token_ms is not None]
    return AskEvalReport(
        provider=answerer.provider_id,
        cases=tuple(results),
        citation_precision=round(sum(precisions) / len(precisions), 4) if precisions else None,
        abstention_accuracy=round(sum(r.abstain_correct for r in results) / len(results), 4) if results else None,
        forbidden_claims=sum(len(r.forbidden_found) for r in results),
        first_token_p50_ms=round(statistics.median(latencies), 2) if latencies else None,
    )
