"""This round's features in the built app: rendering (mdit-py-plugins, nh3), spelling (rapidfuzz), `cairn serve`, file kinds.

Both are reached through imports PyInstaller's analysis can miss (uvicorn picks its
event loop, HTTP protocol and lifespan by name; nh3 is a native extension), so a
build can pass the smoke test and still fail here. Skipped unless dist/Cairn is
built (or CAIRN_FROZEN_APP names a build), like test_frozen.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from core.agents.runner import find_running
from core.base.paths import AppPaths
from tests.packaging.test_frozen import APP, CLI, GUI, Sandbox, make_sandbox, run_frozen

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(not GUI.exists(), reason=f"{GUI} is not built; run `make package` first"),
]

# A callout with a wikilink, inline HTML, an entity, a comment and a block id: none of it may reach a snippet raw.
CALLOUT_NOTE = """---
tags: [travel]
---
# Trip plan

> [!warning] Passport check
> Renew the passport before the [[Lisbon trip|Lisbon journey]] — visa &amp; <b>tickets</b> %%private aside%%
> ^passport-block

- [ ] book the ==night train==
"""
RAW_SYNTAX = ("[!", "[[", "]]", "<b>", "</b>", "&amp;", "%%", "^passport", "==", "---", "tags:")


def _index(box: Sandbox, vault: Path) -> None:
    indexed = run_frozen([str(CLI), "index", "--vault", str(vault), "--quiet", "--json"], box)
    assert indexed.returncode == 0, indexed.stderr


def test_frozen_cli_shows_a_callout_snippet_as_text_without_obsidian_syntax(tmp_path: Path) -> None:
    box = make_sandbox(tmp_path)
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Trip.md").write_text(CALLOUT_NOTE, encoding="utf-8")
    _index(box, vault)
    found = run_frozen([str(CLI), "search", "passport", "--mode", "keyword", "--json"], box, timeout=120)
    assert found.returncode == 0, found.stderr
    hit = json.loads(found.stdout)["hits"][0]
    snippet = hit["snippet"].replace("**", "")  # ** marks the matched words
    assert hit["rel_path"] == "Trip.md"
    assert "Warning: Passport check" in snippet and "Lisbon journey" in snippet and "visa & tickets" in snippet, snippet
    assert not [raw for raw in RAW_SYNTAX if raw in snippet], snippet
    assert "private aside" not in snippet, snippet
    # A typo is corrected from the vault's own words (rapidfuzz, native, frozen).
    typo = run_frozen([str(CLI), "search", "pasport", "--mode", "keyword", "--json"], box, timeout=120)
    assert typo.returncode == 0, typo.stderr
    corrected = json.loads(typo.stdout)
    assert (
        corrected["hits"][0]["rel_path"] == "Trip.md" and "showing results for 'passport'" in corrected["warnings"][0]
    )
    assert box.leaks() == []


def test_frozen_serve_answers_an_agent_over_http_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`cairn serve` runs uvicorn + starlette + the MCP SDK frozen; a token-bearing agent searches, a wrong token is refused."""
    box = make_sandbox(tmp_path)
    vault = tmp_path / "notes"
    vault.mkdir()
    # An agent sees notes marked public only (its default scope).
    (vault / "Trip.md").write_text(
        CALLOUT_NOTE.replace("tags: [travel]", "tags: [travel]\nconfidentiality: public"), encoding="utf-8"
    )
    _index(box, vault)
    added = run_frozen([str(CLI), "agents", "add", "tester", "--json"], box, timeout=120)
    assert added.returncode == 0, added.stderr
    token = json.loads(added.stdout)["token"]
    helped = run_frozen([str(CLI), "serve", "--help"], box, timeout=120)
    assert helped.returncode == 0 and "--port" in helped.stdout, helped.stderr
    # Not inside `unshare -n`: the test must reach the server, which binds 127.0.0.1 only.
    proc = subprocess.Popen(
        [str(CLI), "serve", "--port", "0"],
        env=box.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        running, deadline = None, time.monotonic() + 120
        while running is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.3)
            running = find_running(AppPaths(box.cairn_home))
        assert running is not None and running.pid == proc.pid, f"exit {proc.poll()}"
        call = {"name": "search_notes", "arguments": {"query": "passport", "mode": "keyword"}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
        answer = httpx.post(running.url, json=body, headers=headers, timeout=60, trust_env=False)
        refused = httpx.post(
            running.url, json=body, headers={**headers, "Authorization": "Bearer wrong"}, timeout=60, trust_env=False
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert answer.status_code == 200 and "Trip.md" in answer.text and "Lisbon journey" in answer.text, answer.text
    assert refused.status_code == 401
    assert proc.returncode == 0, err
    assert "MCP over HTTP at http://127.0.0.1:" in err and "server stopped" in err
    assert not (box.cairn_home / "agents" / "server.json").exists()
    assert box.leaks() == []


def test_what_the_build_leaves_out_stays_out() -> None:
    """sqlite3 and QtNetwork are never used (see cairn.spec); OCR is an optional extra, never in the double-click build."""
    internal = APP / "_internal" if (APP / "_internal").is_dir() else APP
    names = {p.name for p in internal.rglob("*") if p.exists()}  # a dangling link left by a dropped library is no file
    assert not {n for n in names if n.startswith(("libsqlite3", "_sqlite3", "QtNetwork", "libQt6Network"))}
    assert not [
        pkg for pkg in ("rapidocr_onnxruntime", "cv2", "PIL", "shapely", "pyclipper") if (internal / pkg).exists()
    ]
    assert (internal / "nh3").is_dir(), "nh3's native library (snippets and previews) must be bundled"


ARTICLE = """<!doctype html><html><head><title>How herons fish</title>
<link rel="canonical" href="https://birds.example.org/herons-fish"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> NAVIGATION cormorantmenu</nav>
<article><h1>How herons fish</h1>
<p>The grey heron stands motionless in shallow water for minutes at a time, waiting for a fish to pass within reach
of its long neck. When one does, the heron strikes with its dagger-like bill in a fraction of a second.</p>
<h2>Where they hunt</h2>
<p>Herons hunt along rivers, lakes and estuaries, and in flooded meadows after rain. They prefer water no deeper than
their legs are long, and they return to the same stretch of bank day after day when the fishing is good.</p>
<p>In winter the herons of the kingfisherbay marshes move to the coast, where the water rarely freezes over.</p>
</article><footer>FOOTER cookies and copyright</footer></body></html>
"""


def test_frozen_cli_indexes_word_epub_and_web_page_files(tmp_path: Path) -> None:
    """python-docx (its default template), EbookLib and readability-lxml on lxml, frozen: each file is found by a word of its own."""
    from tests.kinds_writer import write_docx, write_epub

    box = make_sandbox(tmp_path)
    vault = tmp_path / "notes"
    (vault / "Files").mkdir(parents=True)
    (vault / "Index.md").write_text("# Index\n\nThe reports and books of the bird survey.\n", encoding="utf-8")
    write_docx(vault / "Files" / "report.docx")
    write_epub(vault / "Files" / "marsh-birds.epub")
    (vault / "Files" / "herons.html").write_text(ARTICLE, encoding="utf-8")
    _index(box, vault)
    for word, rel_path in (
        ("egret", "Files/report.docx"),
        ("bittern", "Files/marsh-birds.epub"),
        ("kingfisherbay", "Files/herons.html"),
    ):
        found = run_frozen([str(CLI), "search", word, "--mode", "keyword", "--json"], box, timeout=120)
        assert found.returncode == 0, found.stderr
        hits = json.loads(found.stdout)["hits"]
        assert hits and hits[0]["rel_path"] == rel_path, (word, [h["rel_path"] for h in hits])
    boilerplate = run_frozen([str(CLI), "search", "cormorantmenu", "--mode", "keyword", "--json"], box, timeout=120)
    assert boilerplate.returncode == 0 and json.loads(boilerplate.stdout)["hits"] == [], (
        "a page's navigation was indexed"
    )
    assert box.leaks() == []
