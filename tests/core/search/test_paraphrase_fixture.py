"""Paraphrased and mistyped questions on a committed fixture, with the real offline model.

A regression guard for issue #29's signals (evidence-weighted fusion, meaning kept in
the top 10, note aggregation, vocabulary expansion, spelling): 16 pages of the Obsidian
Tasks docs and 14 questions that avoid the pages' words, plus a typo'd copy of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.engine import Engine
from core.eval.golden import load_golden
from core.eval.runner import run_golden
from core.search.search import SearchRequest

REPO = Path(__file__).resolve().parents[3]
GOLDEN = REPO / "tests" / "golden" / "tasks-docs-sample.yaml"
TYPOS = REPO / "tests" / "golden" / "typos" / "tasks-docs-sample.yaml"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    eng = Engine(AppPaths(tmp_path_factory.mktemp("paraphrase-home")))
    name = eng.add_vault(REPO / "tests" / "fixtures" / "tasks-docs-sample", name="tasks").name
    report = eng.sync([name])[0]
    assert report.semantic_problem is None, report.semantic_problem
    yield eng
    eng.close()


def _recall(engine: Engine, path: Path, mode: str) -> dict[str, float]:
    report = run_golden(engine, load_golden(path), mode=mode, k=10, vault="tasks")
    return {cut: float(report.overall[f"recall@{cut}"] or 0.0) for cut in (3, 10)}


@pytest.mark.slow
def test_hybrid_finds_paraphrased_answers_nearly_as_well_as_the_best_side(engine: Engine) -> None:
    # Measured when written: keyword R@3 0.71, semantic 1.00, hybrid 0.93; R@10 0.93 / 1.00 / 1.00.
    # In a 16-note vault the vector side's top 10 is most of the vault, so "agreement" says little.
    recall = {mode: _recall(engine, GOLDEN, mode) for mode in ("keyword", "semantic", "hybrid")}
    assert recall["hybrid"][3] >= 0.85, recall
    assert recall["hybrid"][3] >= recall["keyword"][3], recall
    assert recall["hybrid"][3] >= recall["semantic"][3] - 1 / 14, recall  # at most one question behind
    assert recall["hybrid"][10] >= max(recall["keyword"][10], recall["semantic"][10]), recall


@pytest.mark.slow
def test_mistyped_questions_keep_most_of_the_clean_recall(engine: Engine) -> None:
    # 14 questions: one miss is 7 %; measured when written 0.86 typo'd vs 0.93 clean.
    clean = _recall(engine, GOLDEN, "hybrid")[3]
    typed = _recall(engine, TYPOS, "hybrid")[3]
    assert typed >= clean - 1 / 14 - 1e-9, (typed, clean)


def test_the_breakdown_names_the_evidence_weighting_and_the_words_also_searched(engine: Engine) -> None:
    named: list[str] = []
    agreed = 0
    for case in load_golden(GOLDEN).cases:
        resp = engine.search(SearchRequest(case.query, mode="hybrid", k=5))
        terms = [t.name for h in resp.hits for t in h.contributions]
        named += [t.name for t in resp.hits[0].contributions]
        if any(n.startswith("keyword evidence ") and "agreement 1.00" in n for n in terms):
            agreed += 1  # both lists agree on the keyword side's first notes: names stay out (name_weight)
            assert not any(n.startswith("name's meaning (") for n in terms), terms
    assert agreed, named
    evidence = [n for n in named if n.startswith("keyword evidence ") and "→" in n]
    assert len(evidence) >= 10, named  # a query the model cannot read (weight 0 for meaning) has none
    assert any("also searched:" in n for n in named), named
    assert any(n.startswith("name's meaning (") for n in named), named  # core.search.name_meaning
