"""Reports round-trip through JSON and flag regressions against a baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.eval.golden import GoldenFileError
from core.eval.report import CaseResult, EvalReport, build_report, compare_to_baseline, failing_cases, load_report


def report(ndcg: float, recall: float, mode: str = "hybrid", passed: bool = True) -> EvalReport:
    cases = [
        CaseResult("a", "first query", ("x.md", "y.md"), {"ndcg@10": ndcg, "recall@10": recall}, passed),
        CaseResult("b", "no relevant", ("z.md",), {"ndcg@10": None, "recall@10": None}, True),
    ]
    return build_report(mode, 10, cases, {"query_p50_ms": 12.5}, source="golden.yaml")


def test_build_report_means_skip_undefined_metrics() -> None:
    rep = report(0.5, 1.0, passed=False)
    assert rep.overall == {"ndcg@10": 0.5, "recall@10": 1.0, "pass_rate": 0.5}
    assert [c.case_id for c in failing_cases(rep)] == ["a"]


def test_json_round_trip_preserves_everything() -> None:
    rep = report(0.712, 0.8)
    again = EvalReport.from_json(rep.to_json())
    assert again == rep
    assert json.loads(rep.to_json())["schema_version"] == 1


def test_no_regression_within_tolerance() -> None:
    assert compare_to_baseline(report(0.705, 0.8), report(0.712, 0.8)) == []
    assert compare_to_baseline(report(0.702, 0.8), report(0.712, 0.8), tolerance=0.01) == []
    assert compare_to_baseline(report(0.9, 0.9), report(0.712, 0.8)) == []


def test_regression_beyond_tolerance_is_listed() -> None:
    problems = compare_to_baseline(report(0.690, 0.8), report(0.712, 0.8))
    assert problems == ["ndcg@10: 0.712 → 0.690 (-0.022)"]


def test_missing_metric_and_mode_change_are_regressions() -> None:
    current = build_report("bm25", 10, [CaseResult("a", "q", (), {"ndcg@10": 0.8}, True)])
    problems = compare_to_baseline(current, report(0.7, 0.8))
    assert "mode: baseline 'hybrid', current 'bm25' (not comparable)" in problems
    assert "recall@10: 0.800 → missing" in problems


def test_baseline_path_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(report(0.75, 0.8).to_json(), encoding="utf-8")
    assert load_report(path) == report(0.75, 0.8)
    assert compare_to_baseline(report(0.70, 0.8), path) == ["ndcg@10: 0.750 → 0.700 (-0.050)"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "invalid JSON at line 1"),
        ("[]", "report must be a JSON object"),
        ('{"schema_version": 99}', "field 'schema_version' must be 1"),
        ('{"schema_version": 1, "mode": "hybrid", "k": "10", "cases": []}', "field 'k' must be int"),
        (
            '{"schema_version": 1, "mode": "hybrid", "k": 10, "cases": [], "overall": {"ndcg@10": "high"}}',
            "field 'overall.ndcg@10' must be a number or null",
        ),
        (
            '{"schema_version": 1, "mode": "m", "k": 10, "overall": {}, "cases": [{"case_id": "c", "query": "q",'
            ' "metrics": {}, "passed": "yes"}]}',
            "case 1 ('c'): field 'passed' must be bool",
        ),
    ],
    ids=["not-json", "not-object", "bad-version", "k-not-int", "metric-not-number", "passed-not-bool"],
)
def test_malformed_baseline_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GoldenFileError) as info:
        compare_to_baseline(report(0.7, 0.8), path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


def test_missing_baseline_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(GoldenFileError, match="baseline.json: baseline file not found"):
        compare_to_baseline(report(0.7, 0.8), tmp_path / "baseline.json")
