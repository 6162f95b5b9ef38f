"""Hostile or unlucky callers of the CLI and the engine: size budgets, dashed queries, restricted notes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.base.errors import RestrictedNoteError
from core.base.paths import AppPaths
from core.cli.main import EXIT_USAGE, main
from core.engine import Engine
from core.search.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, QueryTooLongError
from core.search.search import SearchRequest
from tests.helpers import BagOfWordsEmbedder


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "budget.md").write_text("# Budget\n\nThe household budget for the spring trip.\n")
    (root / "garden.md").write_text("# Garden\n\nTomatoes, basil and a spring budget for seeds.\n")
    (root / "secret.md").write_text("---\nconfidentiality: restricted\n---\n# Salary\n\nMy salary and the spring budget.\n")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_query_starting_with_a_dash_is_searched_not_parsed_as_a_flag(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    assert run(capsys, "index", "--vault", str(vault), "--no-embed", "--quiet")[0] == 0
    for argv in (["search", "-budget"], ["search", "-budget", "--mode", "keyword", "-k", "2"], ["search", "--mode", "keyword", "-budget"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        assert "budget.md" in out
    code, out, _ = run(capsys, "search", "-k", "1", "--mode", "keyword", "garden")  # real short options still work
    assert code == 0 and out.count("garden.md") == 1 and "budget.md" not in out


def test_a_query_over_the_budget_is_refused_fast_with_a_clear_message(capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    assert run(capsys, "index", "--vault", str(vault), "--no-embed", "--quiet")[0] == 0
    t0 = time.perf_counter()
    code, _, err = run(capsys, "search", "word " * 20_000, "--mode", "keyword")
    assert code == EXIT_USAGE and f"the limit is {MAX_QUERY_CHARS:,}" in err
    assert time.perf_counter() - t0 < 5
    code, _, err = run(capsys, "search", "a " * (MAX_QUERY_TERMS + 1), "--mode", "keyword")
    assert code == EXIT_USAGE and f"the limit is {MAX_QUERY_TERMS:,}" in err


def test_the_engine_caps_queries_for_every_caller(vault: Path) -> None:
    engine = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        engine.add_vault(vault, name="v")
        engine.sync(["v"], embed=False)
        with pytest.raises(QueryTooLongError, match="words"):
            engine.search(SearchRequest("budget " * (MAX_QUERY_TERMS + 1), mode="keyword"))
        assert engine.search(SearchRequest("budget " * MAX_QUERY_TERMS, mode="keyword")).hits  # at the limit: fine
    finally:
        engine.close()


def test_similar_refuses_a_restricted_note_as_its_query_unless_allowed(tmp_path: Path, vault: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: BagOfWordsEmbedder())
    try:
        name = engine.add_vault(vault).name
        engine.sync([name])
        with pytest.raises(RestrictedNoteError, match="restricted"):
            engine.similar(name, "secret.md")
        assert all(rel != "secret.md" for rel, _, _ in engine.similar(name, "budget.md"))
        allowed = engine.similar(name, "secret.md", allow_restricted=True)
        assert {rel for rel, _, _ in allowed} == {"budget.md", "garden.md"}
    finally:
        engine.close()


@pytest.mark.parametrize("k", ["-1", "0", "two"])
@pytest.mark.parametrize(
    "argv",
    [
        ["search", "budget", "-k"],
        ["similar", "budget.md", "-k"],
        ["links", "budget.md", "-k"],
        ["ask", "what is the budget", "-k"],
        ["eval", "golden.yaml", "-k"],
        ["search", "budget", "--fusion", "rrf", "--rrf-k"],
        ["eval", "golden.yaml", "--limit-queries"],
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else a,
)
def test_every_count_option_refuses_zero_negative_and_non_numbers(capsys: pytest.CaptureFixture[str], vault: Path, argv: list[str], k: str) -> None:
    assert run(capsys, "index", "--vault", str(vault), "--no-embed", "--quiet")[0] == 0
    code, out, err = run(capsys, *argv, k)
    assert code == EXIT_USAGE, (out, err)
    assert "positive whole number" in err and out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "\udcff\udcfe bad"],
        ["search", "budget", "--folder", "\udcfe"],
        ["search", "budget", "--tag", "caf\udce9"],
        ["ask", "\udcff\udcfe what is the budget"],
        ["ask", "budget?", "--folder", "\udcfe"],
    ],
)
def test_text_that_is_not_utf8_is_refused_with_a_message_not_a_traceback(capsys: pytest.CaptureFixture[str], vault: Path, argv: list[str]) -> None:
    """`cairn search $'\\xff\\xfe bad'`: Python hands such bytes over as lone surrogates."""
    assert run(capsys, "index", "--vault", str(vault), "--no-embed", "--quiet")[0] == 0
    code, out, err = run(capsys, *argv)
    assert code == EXIT_USAGE and out == ""
    assert "not valid UTF-8" in err and "Traceback" not in err


def test_a_non_utf8_query_from_a_real_shell_exits_2(tmp_path: Path, vault: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    subprocess.run([sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed", "--quiet"], env=env, check=True)
    done = subprocess.run([sys.executable, "-m", "core.cli.main", "search", b"\xff\xfe bad"], env=env, capture_output=True)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert b"not valid UTF-8" in done.stderr and b"Traceback" not in done.stderr


def test_the_engine_refuses_a_query_that_is_not_text_for_every_caller(vault: Path) -> None:
    """The MCP server and the app reach the engine without the CLI's check; JSON can carry "\\udcff"."""
    from core.search.query import QueryNotTextError

    engine = Engine(AppPaths.from_env(), embedder_factory=None)
    try:
        engine.add_vault(vault, name="v")
        engine.sync(["v"], embed=False)
        with pytest.raises(QueryNotTextError, match="not valid UTF-8"):
            engine.search(SearchRequest("\udcff bad", mode="keyword"))
    finally:
        engine.close()
