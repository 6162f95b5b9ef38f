"""What semantic search covers while passages are embedded: the same words in status, search, CLI and MCP.

After the first pass every note has a summary vector but no passage has its own, and the
views said "semantic index 0% complete" (#30).
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
from pathlib import Path

import anyio
import pytest

from core.answer.evidence import build_llm_pack
from core.base.paths import AppPaths
from core.base.vault_state import NoteCover, Phase, SemanticState, VaultProgress
from core.cli.main import main as cli_main
from core.engine import Engine
from core.index.note_coverage import note_cover
from core.mcp_server import build_server
from core.search.search import SearchRequest
from core.serialize import status_json
from tests.core.index.test_note_vectors import Recording, long_vault, stop_after_note_pass
from tests.helpers import BagOfWordsEmbedder

EVERY_NOTE = "every note has a summary vector; passages 0% embedded"


def test_the_words_say_what_exists() -> None:
    assert NoteCover(6, 6, 6).words(0) == EVERY_NOTE
    assert NoteCover(6, 6, 0).words(40) == "every note has a vector; passages 40% embedded"  # passages only
    assert NoteCover(1000, 412, 400).words(3) == "412 of 1,000 notes have a vector; passages 3% embedded"
    assert NoteCover(6, 0, 0).words(0) == "0% of passages embedded"
    assert NoteCover().words(0) == "0% of passages embedded" and not NoteCover().every_note


def test_the_status_texts_use_the_cover_in_every_phase() -> None:
    cover = NoteCover(118, 118, 118)
    partial = VaultProgress("docs", Phase.READY, 0, 1455, SemanticState.PARTIAL, cover=cover)
    assert partial.sentence() == f"docs: semantic: {EVERY_NOTE}"  # was "docs: semantic 0%"
    paused = VaultProgress("docs", Phase.PAUSED, 175, 1455, SemanticState.PARTIAL, cover=cover)
    assert paused.semantic_text() == "embedding paused; every note has a summary vector; passages 12% embedded"
    notes = VaultProgress("docs", Phase.EMBEDDING, 40, 118, SemanticState.MISSING, note_pass=True, eta="about 1 min left")
    assert notes.sentence() == "docs: keyword ready · summary vectors for notes 40/118 (33%), about 1 min left"
    passages = VaultProgress("docs", Phase.EMBEDDING, 175, 1455, SemanticState.PARTIAL, cover=cover)
    assert passages.sentence() == "docs: keyword ready · every note has a summary vector · embedding passages 175/1455 (12%)"
    assert passages.semantic_text() == "every note has a summary vector · embedding passages 12%"
    # Without a note cover (an old snapshot, a vault of one-passage notes) the words are as before.
    assert VaultProgress("docs", Phase.EMBEDDING, 3, 4, SemanticState.PARTIAL).sentence() == "docs: keyword ready · embedding 3/4 (75%)"
    assert VaultProgress("docs", Phase.PAUSED, 1, 4).semantic_text() == "embedding paused at 25%"


def test_after_the_note_pass_status_search_cli_and_mcp_say_every_note_has_a_summary_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: Recording())
    name = engine.add_vault(long_vault(tmp_path / "vault")).name
    engine.sync([name], embed=False)
    stop_after_note_pass(engine, name)
    st = engine.vault_status(name)
    assert st.semantic is SemanticState.PARTIAL and st.semantic_fraction == 0.0  # no passage has its own vector
    assert st.cover == NoteCover(6, 6, 6)
    assert st.semantic_reason == EVERY_NOTE
    assert st.progress().sentence() == f"{name}: semantic: {EVERY_NOTE}"
    assert status_json(st)["semantic"]["notes"] == {"total": 6, "with_vector": 6, "summary_only": 6}
    resp = engine.search(SearchRequest("nick3", mode="hybrid", k=3))
    assert f"{name}: semantic: {EVERY_NOTE}" in resp.warnings  # was "semantic index 0% complete"
    assert not any("0% complete" in w for w in resp.warnings)
    assert f"note: {name}: semantic: {EVERY_NOTE}" in build_llm_pack(resp).render()  # what an MCP agent reads
    engine.flush([name])
    engine.close()

    # `cairn status` and the MCP server on a fresh engine: the saved stand-ins, the same words.
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    server = build_server(lambda: Engine(AppPaths.from_env(), embedder_factory=lambda vc: Recording()))

    async def call(tool: str, args: dict[str, object]) -> str:
        result = await server.call_tool(tool, args)
        return "\n".join(getattr(c, "text", "") for c in result.content)  # type: ignore[union-attr]

    assert f"semantic partial ({EVERY_NOTE})" in anyio.run(call, "list_vaults", {})
    assert f"note: {name}: semantic: {EVERY_NOTE}" in anyio.run(call, "search_notes", {"query": "nick3", "k": 3})
    monkeypatch.setattr("core.cli.commands.open_engine", lambda: Engine(AppPaths.from_env(), embedder_factory=lambda vc: Recording()))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["status"]) == 0
    assert f"  semantic: partial — {EVERY_NOTE}" in out.getvalue().splitlines()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["status", "--json"]) == 0
    assert json.loads(out.getvalue())["vaults"][0]["semantic"]["reason"] == EVERY_NOTE


def test_part_of_the_notes_covered_is_counted_and_recounted_as_vectors_arrive(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(100):  # one passage each: no summary vectors, the passage pass covers them one by one
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nfiller words number {i}\n", encoding="utf-8")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: BagOfWordsEmbedder())
    name = engine.add_vault(root).name
    engine.sync([name], embed=False)
    cancel = threading.Event()
    engine.embed_vault(name, progress=lambda d, t, ph: cancel.set() if ph == "embedding" else None, cancel=cancel)
    st = engine.vault_status(name)
    done = st.embedded
    assert 0 < done < 100 and st.cover == NoteCover(100, done, 0)
    assert st.semantic_reason == f"{done} of 100 notes have a vector; passages {done}% embedded; semantic results cover only that part"
    resp = engine.search(SearchRequest("filler words", mode="hybrid"))
    assert f"{name}: semantic: {done} of 100 notes have a vector; passages {done}% embedded" in resp.warnings
    vv, files = engine.vectors_for(name), engine.index_for(name).files
    assert vv is not None
    assert note_cover(vv, files) is note_cover(vv, files)  # counted once per vector version
    engine.embed_vault(name)
    assert engine.vault_status(name).semantic is SemanticState.OK and note_cover(vv, files) == NoteCover(100, 100, 0)
    assert not any("notes have a vector" in w for w in engine.search(SearchRequest("filler words", mode="hybrid")).warnings)
