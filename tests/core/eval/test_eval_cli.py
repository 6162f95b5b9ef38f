"""`cairn eval` end to end: golden files with baselines, and a tiny BEIR dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli.main import main

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def indexed_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--vault", str(REPO / "resources" / "sample-vault"), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()


def test_golden_eval_json_then_a_degraded_baseline_exits_3(indexed_sample: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = REPO / "tests" / "golden" / "sample.yaml"
    assert main(["eval", str(golden), "--mode", "keyword", "--no-ask", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "keyword" and report["overall"]["ndcg@10"] > 0.8
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(report))
    assert main(["eval", str(golden), "--mode", "keyword", "--no-ask", "--baseline", str(baseline)]) == 0
    report["overall"]["ndcg@10"] = min(1.0, report["overall"]["ndcg@10"] + 0.05)  # pretend we used to be better
    baseline.write_text(json.dumps(report))
    capsys.readouterr()
    assert main(["eval", str(golden), "--mode", "keyword", "--no-ask", "--baseline", str(baseline)]) == 3
    assert "DEGRADED" in capsys.readouterr().out


def test_malformed_golden_file_exits_2_naming_file_case_and_field(indexed_sample: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - id: x\n    query: ''\n")
    assert main(["eval", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "'x'" in err and "query" in err


def _tiny_beir(root: Path) -> Path:
    ds = root / "tiny"
    (ds / "qrels").mkdir(parents=True)
    docs = [
        ("d1", "Sourdough baking", "A long cold retard in the fridge gives sourdough a sour taste."),
        ("d2", "Backup schedules", "Nightly restic backups of the NAS run at half past two."),
        ("d3", "Tomato soup", "Roast tomatoes at 220 C before blending them into soup."),
    ]
    (ds / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in docs) + "\n")
    queries = [("q1", "how to make sourdough sour"), ("q2", "when do NAS backups run"), ("q3", "roasted tomato soup")]
    (ds / "queries.jsonl").write_text("\n".join(json.dumps({"_id": i, "text": t}) for i, t in queries) + "\n")
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\n")
    return ds


def test_beir_eval_reports_modes_and_reuses_its_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = _tiny_beir(tmp_path)
    assert main(["eval", "--beir", str(ds), "--split", "test", "--modes", "keyword", "--json", "--quiet"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["queries"] == 3 and first["documents"] == 3 and not first["reused_index"]
    assert first["modes"][0]["mode"] == "keyword" and first["modes"][0]["ndcg_at_10"] == pytest.approx(1.0)
    assert main(["eval", "--beir", str(ds), "--split", "test", "--modes", "keyword", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["reused_index"]


def test_beir_eval_with_a_missing_split_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = _tiny_beir(tmp_path)
    assert main(["eval", "--beir", str(ds), "--split", "train", "--modes", "keyword"]) == 2
    assert "test" in capsys.readouterr().err  # names the split that does exist


def test_a_golden_file_that_names_its_vault_is_indexed_in_the_cache_and_reports_note_recall(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The vault sits in a folder beside a parent of the golden file, as shared/ sits beside a checkout.
    vault = tmp_path / "shared" / "notes"
    vault.mkdir(parents=True)
    (vault / "Publish.md").write_text("# Publish\n\nExport the vault to HTML and upload it.\n", encoding="utf-8")
    (vault / "Garden.md").write_text("# Garden\n\nTomatoes want sun and water.\n", encoding="utf-8")
    before = {p: p.stat().st_mtime_ns for p in vault.iterdir()}
    golden = tmp_path / "repo" / "tests" / "golden" / "notes.yaml"
    golden.parent.mkdir(parents=True)
    golden.write_text(
        "vault_path: ../shared/notes\ncases:\n"
        "  - id: publish\n    query: how do I publish my vault\n    must_include_source_paths: [Publish.md]\n"
        "  - id: tomatoes\n    query: tomatoes sun\n    must_include_source_paths: [Garden.md]\n",
        encoding="utf-8",
    )
    assert main(["eval", str(golden), "--modes", "keyword", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["recall@1"] == 1.0 and report["overall"]["recall@3"] == 1.0 and report["overall"]["mrr@10"] == 1.0
    assert {p: p.stat().st_mtime_ns for p in vault.iterdir()} == before  # nothing written into the vault
    assert main(["eval", str(golden), "--modes", "keyword", "--summary"]) == 0
    out = capsys.readouterr().out
    assert "R@1" in out and "MRR@10" in out


def test_a_golden_vault_path_that_exists_nowhere_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = tmp_path / "g.yaml"
    golden.write_text("vault_path: ../no/such/vault\ncases:\n  - query: x\n    must_include_source_paths: [a.md]\n", encoding="utf-8")
    assert main(["eval", str(golden)]) == 2
    assert "vault_path '../no/such/vault'" in capsys.readouterr().err
