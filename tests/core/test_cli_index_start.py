"""A cold `cairn index` of a small vault loads only what indexing needs (issue #30: fixed start-up cost).

On a 200-note vault the interpreter's start and the imports were ~0.25 s of a ~0.85 s index,
and Recoll's whole run is ~0.2 s. The index path had grown the search stack (through
`core.engine` and the re-exports of `core.cli.commands`) and the search's dataclasses,
markdown-it and its parsers made before the first note, multiprocessing for a worker a small
vault never starts, the OCR side and the PDF reader with OCR off, `_strptime` for daily-note
names and platformdirs with `CAIRN_HOME` set. The probe (as `test_cli_start.PROBE`) runs the
real CLI in a fresh interpreter over a small plain vault and reports which of those ended up in
`sys.modules`. filelock (the index's writer lock) is imported without `logging`, `secrets` and
`platform` (`core.base.lean_import.import_filelock_lean`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.cli_probe import probe_script

REPO = Path(__file__).resolve().parents[2]
NOT_FOR_INDEXING = (
    "core.cli.search_cmd", "core.search.search", "core.search.stages", "core.search.snippets", "core.vault.display_text",
    "core.cli.agents_cmd", "markdown_it", "yaml", "multiprocessing", "_strptime", "core.vault.pdf",
    "core.vault.extractor", "core.index.ocr_pass", "core.base.search_models", "platformdirs", "numpy", "usearch",
    "onnxruntime", "httpx", "html",  # Whoosh's `htmlescape` (its highlighter's) imports `html` if ever called
    # The search side of Whoosh and Cairn: a write builds no query and opens no searcher on a first index.
    "whoosh.query", "whoosh.scoring", "whoosh.searching", "core.index.bm25_fast", "core.index.bm25_python",
    "core.index.phrase_match", "whoosh.lang.snowball",  # the vault is English: no Snowball stemmer at all
    # OpenSSL (hashlib) for a small vault's digests, and decimal for NUMERIC fields with decimal places and
    # timeouts given as Decimals: core.base.digest, core.base.lean_import.class_once_loaded.
    "hashlib", "_hashlib", "decimal", "_decimal",
    "whoosh.support.charset",  # accent folding: no word of these English notes has an accent to fold
    "whoosh.util.times", "calendar", "gettext",  # date fields Cairn's schema has none of; argparse's catalogs
)  # fmt: skip
# shutil's probes, which the `cairn` command answers without loading them (core.base.lean_import.import_shutil_lean;
# a spawned worker's multiprocessing imports shutil before any of Cairn's code runs), what filelock imports for
# locks Cairn never takes (`import_filelock_lean`), and what inspect imports to read source (`INSPECT_STAND_INS`).
NOT_FOR_THE_COMMAND = (
    "bz2", "lzma", "secrets", "hmac", "base64", "platform", "logging", "traceback", "ast", "tokenize",
    *(("dis", "opcode") if sys.version_info[:2] == (3, 11) else ()),  # its table copied for 3.11 only
)  # fmt: skip

# The real CLI in a fresh interpreter (tests/core/cli_probe.py), as `test_cli_start` runs it.
INDEX_PROBE = probe_script(NOT_FOR_INDEXING + NOT_FOR_THE_COMMAND)

# What the parallel build's worker does before its first job: multiprocessing's spawn runs the
# parent's main module (`core.cli.main`) as __mp_main__, then `core.base.spare_core.run_target`.
WORKER_PROBE = f"""
import json, runpy, sys
import multiprocessing.spawn
runpy.run_module("core.cli.main", run_name="__mp_main__", alter_sys=True)
from core.index import segment_worker
segment_worker.warm_up()
print(json.dumps(sorted(m for m in {NOT_FOR_INDEXING!r} if m in sys.modules)))
"""


def _plain_vault(root: Path) -> Path:
    """Notes as the line scanners read them: headings, lists, wikilinks, a web link, a task, HTML blocks, a daily note.

    No front matter: reading one types its keys with PyYAML's resolver (`core.vault.frontmatter_simple`)."""
    vault = root / "notes"
    (vault / "Daily").mkdir(parents=True)
    (vault / "drafts").mkdir()
    (vault / "pics").mkdir()
    (vault / "Home.md").write_text("# Home\n\nSee [[Plan]] first.\n\nThe [site](https://example.org) has more.\n", encoding="utf-8")
    (vault / "Plan.md").write_text("# Plan\n\n- [ ] write the plan\n- read [[Home]]\n\n## Later\n\nA paragraph of text.\n", encoding="utf-8")
    (vault / "Clip.md").write_text(
        '<!-- saved by the web clipper -->\n# Clip\n\n<div class="boxed">\nA boxed remark.\n</div>\n\nText after the box.\n', encoding="utf-8"
    )  # HTML blocks: the scanner finds them with markdown-it's patterns, without markdown-it
    (vault / "Daily" / "2026-11-24.md").write_text("# Tuesday\n\nMet the team about the plan.\n", encoding="utf-8")
    (vault / "drafts" / "Draft.md").write_text("# Draft\n", encoding="utf-8")
    (vault / "pics" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (vault / ".cairnignore").write_text("# not yet\ndrafts\n", encoding="utf-8")
    return vault


def _index_cold(vault: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    """`cairn index --no-embed --json` of `vault` in a fresh interpreter, and the probe's report."""
    done = subprocess.run(
        [sys.executable, "-c", INDEX_PROBE, "index", "--vault", str(vault), "--no-embed", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def test_a_cold_index_of_a_plain_vault_imports_only_what_indexing_needs(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path)
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home")}
    done, report = _index_cold(vault, env)
    assert report["code"] in (0, None), done.stderr
    assert json.loads(done.stdout)["vaults"][0]["documents"] == 4  # drafts/ left out by .cairnignore, the image by default
    assert report["loaded"] == []
    # The index it built answers as any other: the daily note's date, the links, the task.
    found = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "search", "--mode", "keyword", "team", "--json", "--after", "2026-11-24"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert [h["rel_path"] for h in json.loads(found.stdout)["hits"]] == ["Daily/2026-11-24.md"], found.stderr


def test_a_note_off_the_fast_path_still_gets_markdown_it(tmp_path: Path) -> None:
    """The other side: markdown-it is made when a note needs it (here for the #tag in a text with a
    backslash escape, which `plain_tags` leaves to it), not never."""
    vault = _plain_vault(tmp_path)
    (vault / "Tagged.md").write_text("# Tagged\n\nA [note](Other.md) about #gardening, \\*not\\* emphasis.\n", encoding="utf-8")
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home")}
    done, report = _index_cold(vault, env)
    # markdown-it's entities are html's, and its block rules' loggers `logging`'s
    assert report["code"] in (0, None) and report["loaded"] == ["html", "logging", "markdown_it", "traceback"]
    found = subprocess.run(
        [sys.executable, "-m", "core.cli.main", "search", "--mode", "keyword", "note", "--tag", "gardening", "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert [h["rel_path"] for h in json.loads(found.stdout)["hits"]] == ["Tagged.md"]


@pytest.mark.skipif(sys.platform == "win32", reason="the probe mirrors the spawn start of a POSIX worker")
def test_the_segment_workers_start_imports_no_parser_or_search_modules() -> None:
    """The worker readies itself beside the CLI's own imports; what it does not need delays its first job."""
    done = subprocess.run([sys.executable, "-c", WORKER_PROBE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["multiprocessing"]  # the spawn's own


# Cyclic collector passes of a cold `cairn index` from `main()` until the command itself runs.
GC_PROBE = """
import gc, json, os, runpy, sys
sys.argv = ["cairn", *sys.argv[1:]]
early = []

def watch(phase, info):
    if phase != "stop":
        return
    names, frame = set(), sys._getframe()
    while frame is not None:
        if frame.f_code.co_filename.endswith(os.path.join("core", "cli", "main.py")) or frame.f_code.co_name == "cmd_index":
            names.add(frame.f_code.co_name)
        frame = frame.f_back
    if "main" in names and "cmd_index" not in names:
        early.append(info["generation"])

gc.callbacks.append(watch)
def _exit(status):
    raise SystemExit(status)
os._exit = _exit
try:
    runpy.run_module("core.cli.main", run_name="__main__")
except SystemExit:
    pass
print(json.dumps({"early": early, "enabled": gc.isenabled()}), file=sys.stderr)
"""


def test_a_cold_index_walks_none_of_its_start_up_objects(tmp_path: Path) -> None:
    """Parsing the command line and the index command's imports make ~25k objects and no garbage: they are frozen
    before the collector runs again, so no pass walks them (the first one after the pause took 3.7-6 ms)."""
    vault = _plain_vault(tmp_path)
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-c", GC_PROBE, "index", "--vault", str(vault), "--no-embed", "--quiet"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report == {"early": [], "enabled": True}, done.stderr
