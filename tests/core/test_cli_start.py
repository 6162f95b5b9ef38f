"""A cold `cairn search` loads only what its mode uses (issue #21: CLI start-up).

Every `cairn search` is a new process, so each import it does not need is paid
on every call: httpx (remote embedders), onnxruntime and usearch (vectors),
markdown-it and PyYAML (parsing notes) cost ~0.5 s together on this machine (markdown-it is
now needed by every search: snippets show the chunk as read, `docs/rendering.md`), and
numpy ~0.07 s (a keyword search scores in plain Python, `core.index.bm25_python`).
The probe runs the real CLI in a fresh interpreter over a real index with
vectors and reports which of those modules ended up in `sys.modules`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from tests.core.cli_probe import probe_script

REPO = Path(__file__).resolve().parents[2]
# shared/ sits beside the checkout (/work/main) or one level above it (a worktree).
TIL = next((p for d in (REPO.parent, REPO.parent.parent) if (p := d / "shared" / "data" / "vaults" / "simonw-til").is_dir()), REPO / "missing")
HEAVY = (
    "httpx", "onnxruntime", "usearch", "markdown_it", "yaml", "pathspec", "tokenizers", "numpy", "urllib.request", "asyncio", "core.vault.pdf",
    "core.index.ocr_pass",  # the OCR stage's: only when OCR is switched on
    "bz2", "lzma",  # shutil's probes of them (core.base.lean_import.import_shutil_lean)
    "_hashlib", "decimal",  # OpenSSL for a few digests, Decimal for Whoosh's NUMERIC fields (core.base.digest, whoosh_pin)
)  # fmt: skip
# What only writing an index needs (walking, reading and chunking files, resolving links), `logging`
# (nothing went wrong) and rapidfuzz (every word known): ~35 ms of a cold keyword search (issue #30).
WRITING_SIDE = (
    "core.vault.scanner", "core.vault.attachments", "core.vault.chunker", "core.vault.obsidian_settings",
    "core.index.file_errors", "core.index.intake", "core.vault.link_resolver", "logging", "rapidfuzz",
)  # fmt: skip

PROBE = probe_script(HEAVY + WRITING_SIDE)


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _probe(env: dict[str, str], *args: str) -> tuple[dict[str, object], str]:
    done = _cli(env, *args)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report, done.stdout


@pytest.fixture(scope="module")
def indexed_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Four real notes, keyword-indexed and embedded with the built-in model."""
    if not TIL.is_dir():
        pytest.skip("the simonw-til vault is not on this machine")
    root = tmp_path_factory.mktemp("cli-start")
    vault = root / "til"
    for rel in sorted(p.relative_to(TIL) for p in (TIL / "sqlite").glob("*.md"))[:4]:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(TIL / rel, vault / rel)
    env = {**os.environ, "CAIRN_HOME": str(root / "home")}
    built = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--quiet", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    embedding = json.loads(built.stdout)["vaults"][0]["embedding"]
    if not embedding or embedding["embedded"] + embedding["from_cache"] == 0:
        pytest.skip("the built-in embedding model is not available here")
    return env


def test_keyword_search_loads_no_vector_http_or_yaml_libraries(indexed_home: dict[str, str]) -> None:
    report, out = _probe(indexed_home, "search", "--mode", "keyword", "sqlite", "--json")
    assert report["code"] in (0, None)
    assert json.loads(out)["hits"], "the probe must run a real search that finds notes"
    # Snippets are the chunk as read (docs/rendering.md): most chunks without markdown-it
    # (core.vault.display_plain), a few of these notes' (HTML, images) with it.
    loaded = report["loaded"]
    assert isinstance(loaded, list) and set(loaded) <= {"markdown_it", "logging"}
    assert "logging" not in loaded or "markdown_it" in loaded  # markdown-it's own import of it


def test_hybrid_search_still_loads_the_model_and_vectors(indexed_home: dict[str, str]) -> None:
    """The other side of the same probe: lazy imports must not turn semantic search off."""
    report, out = _probe(indexed_home, "search", "--mode", "hybrid", "sqlite", "--json")
    assert report["code"] in (0, None)
    response = json.loads(out)
    assert response["mode"] == "hybrid" and response["hits"]
    assert {"onnxruntime", "usearch"} <= set(report["loaded"])  # type: ignore[arg-type]
    assert "httpx" not in report["loaded"]  # type: ignore[operator]  # the built-in model is local
    assert report["frozen"]  # the process skips the shutdown's cycle collections (core.cli.process_exit)


def test_a_repeated_hybrid_query_loads_no_model_and_answers_the_same(indexed_home: dict[str, str]) -> None:
    """Its vector is on disk: neither onnxruntime nor the tokenizer is imported (Linux: see core.base.native)."""
    args = ("search", "--mode", "hybrid", "sqlite json functions", "--json")
    first, out_first = _probe(indexed_home, *args)
    again, out_again = _probe(indexed_home, *args)
    assert first["code"] in (0, None) and again["code"] in (0, None)
    loaded_first, loaded_again = (set(map(str, r["loaded"])) for r in (first, again) if isinstance(r["loaded"], list))
    assert {"onnxruntime", "tokenizers", "usearch"} <= loaded_first
    if sys.platform.startswith("linux"):
        assert "usearch" in loaded_again and not {"onnxruntime", "tokenizers"} & loaded_again
    answers = [json.loads(out) for out in (out_first, out_again)]
    for answer in answers:
        answer.pop("timings_ms", None)
    assert answers[0]["hits"] and answers[0] == answers[1]


def test_a_keyword_index_and_a_status_load_no_vector_or_http_libraries(tmp_path: Path) -> None:
    """`cairn index --no-embed` imported numpy through the embedding registry: ~0.1 s and 13 MiB a cold index."""
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Home.md").write_text("---\ntags: [a]\n---\n# Home\n\nSee [[Other]] and #tag.\n", encoding="utf-8")
    (vault / "Other.md").write_text("# Other\n\n- [ ] a task\n\n> [!note]\n> a callout\n", encoding="utf-8")
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home")}
    report, out = _probe(env, "index", "--vault", str(vault), "--no-embed", "--json")
    assert report["code"] in (0, None) and json.loads(out)["vaults"][0]["documents"] == 2
    assert not {"numpy", "onnxruntime", "usearch", "httpx", "tokenizers"} & set(report["loaded"])  # type: ignore[arg-type]
    assert "core.vault.chunker" in report["loaded"]  # type: ignore[operator]  # the probe really parsed notes
    # ... and read them all on the plain paths (blocks, tags, wikilinks, callouts, tasks, front matter):
    # markdown-it, YAML and pathspec are imported only for a note or a rule that needs them.
    assert not {"markdown_it", "yaml", "pathspec", "core.index.ocr_pass"} & set(cast("list[str]", report["loaded"]))
    report, out = _probe(env, "status", "--json")
    assert report["code"] in (0, None) and json.loads(out)["vaults"][0]["built"]
    assert not {"onnxruntime", "usearch", "httpx", "tokenizers"} & set(report["loaded"])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def obsidian_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """60 generated notes in Obsidian's shape (the 10k-note benchmark's), keyword-indexed only."""
    sys.path.insert(0, str(REPO / "bench"))
    from synth_vault import generate_vault

    root = tmp_path_factory.mktemp("cli-obsidian")
    generate_vault(root / "vault", 60, seed=9, shape="obsidian")
    env = {**os.environ, "CAIRN_HOME": str(root / "home")}
    built = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "index", "--vault", str(root / "vault"), "--no-embed", "--quiet"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return env


def test_a_keyword_search_of_obsidian_notes_shows_snippets_without_markdown_it(obsidian_home: dict[str, str]) -> None:
    """Every snippet is the chunk as read; in these shapes none takes markdown-it (~70 modules, its parser)."""
    report, out = _probe(obsidian_home, "search", "--mode", "keyword", "-k", "20", "time", "--json")
    assert report["code"] in (0, None)
    hits = json.loads(out)["hits"]
    assert len(hits) >= 5 and all(h["snippet"] for h in hits)
    assert report["loaded"] == []  # nor any module of the writing side (`WRITING_SIDE`)


def test_a_keyword_search_imports_nothing_only_writing_an_index_needs(obsidian_home: dict[str, str]) -> None:
    """Opening an index and reading it takes none of the modules that walk, read and chunk notes (issue #30)."""
    report, out = _probe(obsidian_home, "search", "--mode", "keyword", "-k", "5", "time", "--json")
    assert report["code"] in (0, None) and json.loads(out)["hits"]
    loaded = report["loaded"]
    assert isinstance(loaded, list) and not set(WRITING_SIDE) & set(loaded)


EXIT_PROBE = """
import atexit, sys
atexit.register(lambda: print("atexit ran", file=sys.stderr))
sys.argv = ["cairn", *sys.argv[1:]]
from core.cli.main import entry
entry()
"""


def test_a_search_process_ends_at_once_with_its_output_whole(obsidian_home: dict[str, str]) -> None:
    """`entry` skips the interpreter's teardown after a search (~40 ms), never its output; other commands exit as usual."""
    run = [sys.executable, "-c", EXIT_PROBE]
    search = ["search", "--mode", "keyword", "-k", "20", "time"]
    found = subprocess.run([*run, *search], cwd=REPO, env=obsidian_home, capture_output=True, text=True, timeout=300)
    in_full = [sys.executable, "-c", "import sys; from core.cli.main import main; main(sys.argv[1:])"]
    whole = subprocess.run([*in_full, *search], cwd=REPO, env=obsidian_home, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0 and found.stdout.count("score") >= 5
    assert found.stdout == whole.stdout  # all of it flushed before the process ended
    assert "atexit ran" not in found.stderr
    status = subprocess.run([*run, "status", "--json"], cwd=REPO, env=obsidian_home, capture_output=True, text=True, timeout=300)
    assert status.returncode == 0 and json.loads(status.stdout)["vaults"]
    assert "atexit ran" in status.stderr
    usage = subprocess.run([*run, "search", "--mode", "keyword", "-k", "0", "time"], cwd=REPO, env=obsidian_home, capture_output=True, text=True, timeout=300)
    assert usage.returncode != 0  # a failing search keeps its exit code


def test_only_cairns_own_search_process_turns_the_cyclic_collector_off(obsidian_home: dict[str, str]) -> None:
    """~10 ms of a cold search's imports were collector passes; a test or script calling `main` keeps its collector."""
    code = (
        "import gc, io, contextlib, sys; from core.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['search', '--mode', 'keyword', 'time'], own_process=sys.argv[1] == 'own')\n"
        "print(gc.isenabled())"
    )
    states = [
        subprocess.run([sys.executable, "-c", code, how], cwd=REPO, env=obsidian_home, capture_output=True, text=True, timeout=300).stdout.split()[-1]
        for how in ("own", "called")
    ]
    assert states == ["False", "True"]
