"""Golden files: valid ones load; every kind of mistake names file, case and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.eval.golden import (
    AskCase,
    GoldenChunkRef,
    GoldenFileError,
    load_golden,
    parse_golden,
)

GOOD_YAML = """\
cases:
  - id: backups
    query: how often do we back up the database
    kind: factual
    must_include_source_paths: [ops/backups.md]
    acceptable_source_paths: [ops/runbook.md, ./ops/backups.md]
    must_include_chunk_refs:
      - {source_path: ops/backups.md, chunk_ordinal: 2}
    forbidden_claims: ["backups are weekly"]
  - query: second case without id
ask_cases:
  - id: ask-backups
    question: How often are backups taken?
    expected_sources: [ops/backups.md]
    expect_abstain: false
  - question: What is the CEO's salary?
    expect_abstain: true
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_good_yaml_loads_into_frozen_cases(tmp_path: Path) -> None:
    golden = load_golden(write(tmp_path, "g.yaml", GOOD_YAML))
    first, second = golden.cases
    assert first.id == "backups"
    assert first.query == "how often do we back up the database"
    assert first.kind == "factual"
    assert first.must_include_source_paths == ("ops/backups.md",)
    assert first.acceptable_source_paths == ("ops/runbook.md", "ops/backups.md")
    assert first.must_include_chunk_refs == (GoldenChunkRef("ops/backups.md", 2),)
    assert first.forbidden_claims == ("backups are weekly",)
    assert second.id == "case-2"
    assert second.kind is None and second.must_include_source_paths == ()
    assert golden.ask_cases[0] == AskCase("ask-backups", "How often are backups taken?", ("ops/backups.md",))
    assert golden.ask_cases[1].id == "ask-case-2" and golden.ask_cases[1].expect_abstain is True
    with pytest.raises(AttributeError):
        first.query = "changed"  # type: ignore[misc]


def test_graded_relevance_prefers_must_include() -> None:
    golden = parse_golden(
        {"cases": [{"query": "q", "must_include_source_paths": ["a.md"], "acceptable_source_paths": ["a.md", "b.md"]}]},
        "mem",
    )
    assert golden.cases[0].graded_relevance() == {"a.md": 2, "b.md": 1}


def test_json_golden_file_loads(tmp_path: Path) -> None:
    path = write(tmp_path, "g.json", json.dumps({"cases": [{"id": "j", "query": "hello"}]}))
    assert load_golden(path).cases[0].id == "j"


def test_paths_are_nfc_normalised_to_match_vault_paths() -> None:
    decomposed = "cafe\u0301.md"
    golden = parse_golden({"cases": [{"query": "q", "must_include_source_paths": [decomposed]}]}, "mem")
    assert golden.cases[0].must_include_source_paths == ("caf\u00e9.md",)


MALFORMED = [
    pytest.param(
        "cases:\n  - {id: a, query: x}\n  - {id: b, query: y}\n  - {id: foo, query: ''}\n",
        "g.yaml: case 3 ('foo'): field 'query' must be a non-empty string",
        id="empty-query",
    ),
    pytest.param("cases:\n  - {id: foo}\n", "case 1 ('foo'): field 'query' is required", id="missing-query"),
    pytest.param("cases:\n  - {query: yes}\n", "case 1 ('case-1'): field 'query' must be a non-empty string", id="bool-query"),
    pytest.param("cases:\n  - {id: 3, query: q}\n", "case 1: field 'id' must be a non-empty string", id="int-id"),
    pytest.param(
        "cases:\n  - {query: q, must_include_source_path: [a.md]}\n",
        "case 1 ('case-1'): field 'must_include_source_path' is not a known field",
        id="typo-field",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_source_paths: a.md}\n",
        "field 'must_include_source_paths' must be a list of strings",
        id="paths-not-list",
    ),
    pytest.param(
        "cases:\n  - {query: q, acceptable_source_paths: [a.md, 5]}\n",
        "field 'acceptable_source_paths' must contain only non-empty strings, got 5",
        id="path-not-string",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_source_paths: ['/abs/a.md']}\n",
        "must hold vault-relative POSIX paths",
        id="absolute-path",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_source_paths: ['dir\\\\a.md']}\n",
        "must hold vault-relative POSIX paths",
        id="backslash-path",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_chunk_refs: [{source_path: a.md, chunk_ordinal: -1}]}\n",
        "field 'must_include_chunk_refs[1].chunk_ordinal' must be an integer >= 0",
        id="negative-ordinal",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_chunk_refs: [{source_path: a.md}]}\n",
        "field 'must_include_chunk_refs[1].chunk_ordinal' must be an integer >= 0, got None",
        id="missing-ordinal",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_chunk_refs: [{source_path: a.md, chunk_ordinal: 1, ord: 2}]}\n",
        "field 'must_include_chunk_refs[1].ord' is not a known field",
        id="chunk-ref-extra-key",
    ),
    pytest.param(
        "cases:\n  - {query: q, must_include_chunk_refs: [a.md]}\n",
        "field 'must_include_chunk_refs[1]' must be a mapping",
        id="chunk-ref-not-mapping",
    ),
    pytest.param(
        "cases:\n  - {query: q, forbidden_claims: [ok, '']}\n",
        "field 'forbidden_claims' must contain only non-empty strings",
        id="empty-claim",
    ),
    pytest.param("cases:\n  - {query: q, kind: 7}\n", "field 'kind' must be a non-empty string", id="kind-not-str"),
    pytest.param("cases:\n  - just a string\n", "g.yaml: case 1: must be a mapping, got str", id="case-not-mapping"),
    pytest.param(
        "cases:\n  - {id: a, query: q}\n  - {id: a, query: r}\n",
        "case 2 ('a'): field 'id' duplicates case 1",
        id="duplicate-id",
    ),
    pytest.param(
        "ask_cases:\n  - {id: z, question: q, expect_abstain: 'no'}\n",
        "ask case 1 ('z'): field 'expect_abstain' must be true or false",
        id="abstain-not-bool",
    ),
    pytest.param("ask_cases:\n  - {id: z}\n", "ask case 1 ('z'): field 'question' is required", id="ask-missing-question"),
    pytest.param(
        "ask_cases:\n  - {question: q, expected_source: [a.md]}\n",
        "field 'expected_source' is not a known field",
        id="ask-typo",
    ),
    pytest.param("cases: {query: q}\n", "top-level field 'cases' must be a list", id="cases-not-list"),
    pytest.param("- query: q\n", "top level must be a mapping", id="top-level-list"),
    pytest.param("", "top level must be a mapping", id="empty-file"),
    pytest.param("case:\n  - {query: q}\n", "unknown top-level field(s) 'case'", id="top-level-typo"),
    pytest.param("{}\n", "needs a 'cases' or 'ask_cases' list", id="no-cases"),
    pytest.param("cases: [\n", "g.yaml: invalid YAML at line", id="yaml-syntax"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_golden_file_names_file_case_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "g.yaml", text)
    with pytest.raises(GoldenFileError) as info:
        load_golden(path)
    assert message in str(info.value)
    assert str(info.value).startswith(str(path))


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "g.json", '{"cases": [\n  {"query": "q",}\n]}')
    with pytest.raises(GoldenFileError, match=r"g\.json: invalid JSON at line 2"):
        load_golden(path)


def test_missing_file_and_unknown_suffix_are_reported(tmp_path: Path) -> None:
    with pytest.raises(GoldenFileError, match="file not found"):
        load_golden(tmp_path / "nope.yaml")
    with pytest.raises(GoldenFileError, match="unsupported golden file type"):
        load_golden(write(tmp_path, "g.txt", "cases: []"))


def test_ask_cases_take_expected_answers_and_the_file_a_vault_found_beside_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "wt" / "checkout"
    (repo / "tests" / "golden").mkdir(parents=True)
    (tmp_path / "shared" / "vaults" / "til").mkdir(parents=True)
    path = repo / "tests" / "golden" / "real.yaml"
    path.write_text(
        "vault: ../shared/vaults/til\nask_cases:\n  - id: a\n    question: which process is on a port\n"
        "    expected_answer: ['lsof -i :8000']\n"
    )
    golden = load_golden(path)
    assert golden.ask_cases[0].expected_answer == ("lsof -i :8000",)
    assert golden.resolve_vault() == (tmp_path / "shared" / "vaults" / "til").resolve()
    with pytest.raises(GoldenFileError, match="'vault_path'"):
        parse_golden({"vault": 3, "ask_cases": []}, "x.yaml")
    with pytest.raises(GoldenFileError, match="expected_answer"):
        parse_golden({"ask_cases": [{"question": "q", "expected_answer": "not a list"}]}, "x.yaml")
