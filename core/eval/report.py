"""Evaluation reports: per-case rows, overall means, JSON, baseline comparison.

A report is written after every eval run; CI keeps one as a baseline and fails
when a metric drops by more than a tolerance. Reports are plain JSON (no
pickle) so they diff well in review and survive refactors of these classes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.eval.golden import GoldenFileError
from core.eval.metrics import mean

SCHEMA_VERSION = 1
PASS_RATE = "pass_rate"


@dataclass(frozen=True, slots=True)
class CaseResult:
    """How one query did.

    ``metrics`` values are ``None`` where the metric is undefined for the case
    (no relevant notes); ``problems`` says in words why ``passed`` is false.
    """

    case_id: str
    query: str
    ranked_source_paths: tuple[str, ...]
    metrics: dict[str, float | None]
    passed: bool
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EvalReport:
    """One eval run: every case, the means over cases, and how long it took.

    All metrics in ``overall`` are higher-is-better, which is what
    :func:`compare_to_baseline` assumes. ``timings`` (seconds or ms, named by
    the caller, e.g. ``"query_p50_ms"``) are informative and never compared.
    """

    mode: str
    k: int
    cases: tuple[CaseResult, ...]
    overall: dict[str, float | None]
    timings: dict[str, float] = field(default_factory=dict)
    source: str = ""

    def to_json(self) -> str:
        """Serialise as stable, pretty JSON (sorted keys) ending in a newline."""
        payload = {
            "schema_version": SCHEMA_VERSION,
            "mode": self.mode,
            "k": self.k,
            "source": self.source,
            "overall": self.overall,
            "timings": self.timings,
            "cases": [
                {
                    "case_id": c.case_id,
                    "query": c.query,
                    "ranked_source_paths": list(c.ranked_source_paths),
                    "metrics": c.metrics,
                    "passed": c.passed,
                    "problems": list(c.problems),
                }
                for c in self.cases
            ],
        }
        return json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "<report>") -> EvalReport:
        """Parse and validate a report written by :meth:`to_json`.

        Args:
            text: The JSON text.
            source: Name used in error messages, usually the file path.

        Raises:
            GoldenFileError: The text is not a valid report.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise GoldenFileError(f"{source}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
        return _parse_report(data, source)


def build_report(
    mode: str,
    k: int,
    cases: Sequence[CaseResult],
    timings: Mapping[str, float] | None = None,
    source: str = "",
) -> EvalReport:
    """Assemble a report, computing ``overall`` from the cases.

    Each metric's mean skips cases where it is ``None``; ``pass_rate`` is the
    share of passed cases (``None`` when there are no cases).
    """
    names = sorted({name for case in cases for name in case.metrics})
    overall: dict[str, float | None] = {name: mean(c.metrics.get(name) for c in cases) for name in names}
    overall[PASS_RATE] = mean(1.0 if c.passed else 0.0 for c in cases)
    return EvalReport(mode, k, tuple(cases), overall, dict(timings or {}), source)


def load_report(path: Path) -> EvalReport:
    """Read a report (typically a CI baseline) from disk.

    Raises:
        GoldenFileError: The file is missing or is not a valid report; the
            message names the file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GoldenFileError(f"{path}: baseline file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenFileError(f"{path}: cannot read file: {exc}") from exc
    return EvalReport.from_json(text, source=str(path))


def compare_to_baseline(
    current: EvalReport, baseline: EvalReport | Path, tolerance: float = 0.01
) -> list[str]:
    """List the overall metrics that got worse than the baseline by more than ``tolerance``.

    Args:
        current: This run's report.
        baseline: The reference report, or the path of its JSON file.
        tolerance: Allowed absolute drop per metric (noise margin).

    Returns:
        One line per regression, e.g. ``"ndcg@10: 0.712 → 0.690 (-0.022)"``;
        a metric the baseline has but this run lacks is a regression too, and
        so is a different mode (the numbers would not be comparable). Empty
        when nothing regressed.

    Raises:
        GoldenFileError: ``baseline`` is a path to a missing or malformed file.
    """
    base = load_report(baseline) if isinstance(baseline, Path) else baseline
    problems: list[str] = []
    if base.mode != current.mode:
        problems.append(f"mode: baseline {base.mode!r}, current {current.mode!r} (not comparable)")
    for name in sorted(base.overall):
        old = base.overall[name]
        if old is None:
            continue
        new = current.overall.get(name)
        if new is None:
            problems.append(f"{name}: {old:.3f} → missing")
            continue
        delta = new - old
        # The epsilon keeps a drop of exactly `tolerance` from failing on float noise.
        if -delta > tolerance + 1e-9:
            problems.append(f"{name}: {old:.3f} → {new:.3f} ({delta:+.3f})")
    return problems


def _parse_report(data: Any, source: str) -> EvalReport:
    if not isinstance(data, dict):
        raise GoldenFileError(f"{source}: report must be a JSON object")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise GoldenFileError(f"{source}: field 'schema_version' must be {SCHEMA_VERSION}, got {version!r}")
    mode = _need(data, "mode", str, source, "report")
    k = _need(data, "k", int, source, "report")
    raw_cases = _need(data, "cases", list, source, "report")
    cases = tuple(_parse_case(raw, i, source) for i, raw in enumerate(raw_cases, start=1))
    overall = _metric_map(data.get("overall"), "overall", source, "report")
    timings_raw = data.get("timings", {})
    if not isinstance(timings_raw, dict) or not all(_is_number(v) for v in timings_raw.values()):
        raise GoldenFileError(f"{source}: report: field 'timings' must map names to numbers")
    timings = {str(name): float(value) for name, value in timings_raw.items()}
    src = data.get("source", "")
    if not isinstance(src, str):
        raise GoldenFileError(f"{source}: report: field 'source' must be a string")
    return EvalReport(mode, k, cases, overall, timings, src)


def _parse_case(raw: Any, index: int, source: str) -> CaseResult:
    where = f"case {index}"
    if not isinstance(raw, dict):
        raise GoldenFileError(f"{source}: {where}: must be a JSON object")
    case_id = _need(raw, "case_id", str, source, where)
    where = f"case {index} ({case_id!r})"
    query = _need(raw, "query", str, source, where)
    ranked = _string_list(raw.get("ranked_source_paths", []), "ranked_source_paths", source, where)
    metrics = _metric_map(raw.get("metrics"), "metrics", source, where)
    passed = _need(raw, "passed", bool, source, where)
    problems = _string_list(raw.get("problems", []), "problems", source, where)
    return CaseResult(case_id, query, ranked, metrics, passed, problems)


def _need(data: dict[str, Any], name: str, kind: type, source: str, where: str) -> Any:
    value = data.get(name)
    # bool is an int subclass; a `true` k is as wrong as a string one.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise GoldenFileError(f"{source}: {where}: field {name!r} must be {kind.__name__}, got {value!r}")
    return value


def _string_list(value: Any, name: str, source: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise GoldenFileError(f"{source}: {where}: field {name!r} must be a list of strings")
    return tuple(value)


def _metric_map(value: Any, name: str, source: str, where: str) -> dict[str, float | None]:
    if not isinstance(value, dict):
        raise GoldenFileError(f"{source}: {where}: field {name!r} must be an object of metric values")
    out: dict[str, float | None] = {}
    for metric, number in value.items():
        if number is not None and not _is_number(number):
            raise GoldenFileError(
                f"{source}: {where}: field '{name}.{metric}' must be a number or null, got {number!r}"
            )
        out[str(metric)] = None if number is None else float(number)
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def failing_cases(report: EvalReport) -> list[CaseResult]:
    """The cases that did not pass, in report order (for the CLI summary)."""
    return [case for case in report.cases if not case.passed]
