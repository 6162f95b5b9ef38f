"""Cross-process safety of a vault's index and recovery from a manifest the index does not match.

Two processes really run here: a `cairn index` child builds a first index of a few thousand
notes while this process opens an Engine on the same data folder and asks for status and search.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from core.base.errors import IndexBusyError, IndexNotBuiltError
from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.base.vault_state import Phase
from core.cli.main import main
from core.engine import Engine
from core.index.indexer import Recovery, VaultIndex
from core.index.keyword_index import KeywordIndex
from core.index.vault_lock import BUSY_STATE, VaultLock
from core.search.search import SearchRequest
from tests.fixture_notes import write_vault

REPO = Path(__file__).resolve().parents[3]
# Enough notes that the child's first index holds the vault's lock well past a reader's first status, which
# waits ~1 s for a build step before it answers "busy": at 3,000 notes the build (~1.2 s) could end first.
NOTES = 8000


def keyword_hits(engine: Engine, query: str) -> set[str]:
    resp = engine.search(SearchRequest(query, mode="keyword", k=20, filters=SearchFilters(allow_restricted=True)))
    return {h.chunk.rel_path for h in resp.hits}


def make_vault(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / f"topic-{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        words = " ".join(f"term{(i * 7 + j) % 997}" for j in range(60))
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\nuniq{i}x appears only here. {words}\n\n## More\n\n{words}\n", encoding="utf-8")


def til_vault(root: Path, n: int) -> list[str]:
    """`n` generated notes in the shapes of real ones (front matter, code blocks, links; tests/fixture_notes.py)."""
    write_vault(root, n)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


# -- two processes ---------------------------------------------------------------------------


def test_a_reader_never_resets_a_first_index_another_process_is_building(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    make_vault(vault, NOTES)
    env = {**os.environ, "CAIRN_HOME": str(home)}
    child = subprocess.Popen(
        [sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed", "--quiet", "--json"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        vdir = AppPaths(home).vault_dir("vault")
        probe = VaultLock(vdir)
        deadline = time.monotonic() + 120
        while not ((vdir / "write.lock").exists() and not probe.free()):  # the child is writing
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never took the vault's lock"
            time.sleep(0.05)
        engine = Engine(AppPaths(home), embedder_factory=None)
        seen_busy = 0
        while child.poll() is None:
            engine.reload_config()
            if not engine.vaults:
                continue
            status = engine.vault_status("vault")
            if status.elsewhere:
                seen_busy += 1
                assert status.info.state == BUSY_STATE and not status.built
                assert status.progress().phase is Phase.ELSEWHERE
                try:  # "being indexed by another ...", or "No index yet" between its steps
                    keyword_hits(engine, "uniq42x")
                except IndexNotBuiltError:
                    pass
                else:  # only if the build finished between the status and the search
                    assert engine.vault_status("vault").built
            time.sleep(0.2)
        out, err = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert seen_busy > 0, "the reader never saw the build in progress (too fast to test?)"
    stats = json.loads(out)
    assert json.dumps(stats).count(str(NOTES)) >= 1
    # The build completed over nothing of ours, and this same engine now sees all of it.
    status = engine.vault_status("vault")
    assert status.built and not status.elsewhere
    assert status.info.documents == NOTES
    assert keyword_hits(engine, "uniq2999x") == {"topic-19/note-2999.md"}
    assert keyword_hits(engine, "uniq0x") == {"topic-00/note-0000.md"}
    engine.close()


def test_an_open_engine_sees_an_index_another_engine_rewrote(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    make_vault(vault, 30)
    app = Engine(AppPaths(home), embedder_factory=None)
    app.add_vault(vault)
    app.sync(embed=False)
    assert keyword_hits(app, "uniq30x") == set()
    make_vault(vault, 31)  # note 30 is new
    cli = Engine(AppPaths(home), embedder_factory=None)  # `cairn index`: its own VaultIndex and file lock
    assert cli.sync(embed=False)[0].keyword.added == 1
    cli.close()
    assert keyword_hits(app, "uniq30x") == {"topic-10/note-0030.md"}
    assert app.vault_status("vault").info.documents == 31
    app.close()


# -- downgrade / upgrade -----------------------------------------------------------------------


def test_a_manifest_naming_notes_the_emptied_keyword_index_lacks_is_rebuilt(tmp_path: Path) -> None:
    """An older Cairn emptied the keyword index but left the manifest: the next sync re-indexes all."""
    home, vault = tmp_path / "home", tmp_path / "vault"
    notes = til_vault(vault, 40)
    engine = Engine(AppPaths(home), embedder_factory=None)
    engine.add_vault(vault)
    engine.sync(embed=False)
    vc = engine.vault("vault")
    engine.close()
    vdir = AppPaths(home).vault_dir("vault")
    manifest = (vdir / "manifest.json").read_bytes()
    shutil.rmtree(vdir / "whoosh")  # what the older version did: a fresh, empty keyword index
    KeywordIndex(vdir / "whoosh").close()
    assert (vdir / "manifest.json").read_bytes() == manifest  # ... beside the newer manifest

    vi = VaultIndex(vc, AppPaths(home), engine.config)
    assert vi.recovery == Recovery.MANIFEST_MISMATCH
    assert vi.files == {}
    stats = vi.sync()
    assert stats.added == len(notes) and stats.documents == len(notes)
    assert vi.keyword.doc_count() == sum(len(r.chunks) for r in vi.files.values()) > 0
    vi.close()
    again = Engine(AppPaths(home), embedder_factory=None)
    assert again.index_for("vault").recovery is None
    assert again.sync(embed=False)[0].keyword.added == 0  # recovered for good: nothing to redo
    first_title = again.index_for("vault").files[notes[0]].title
    assert notes[0] in keyword_hits(again, first_title)
    again.close()


def test_a_partly_emptied_keyword_index_reindexes_only_what_is_missing(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    notes = til_vault(vault, 30)
    engine = Engine(AppPaths(home), embedder_factory=None)
    engine.add_vault(vault)
    engine.sync(embed=False)
    gone = notes[:5]
    engine.index_for("vault").keyword.apply(gone, [])  # the index lost five notes, the manifest did not
    engine.close()
    vi = VaultIndex(engine.vault("vault"), AppPaths(home), engine.config)
    assert vi.recovery == Recovery.MANIFEST_MISMATCH
    assert set(vi.files) == set(notes) - set(gone)
    stats = vi.sync()
    assert stats.added == 5 and set(stats.changed_paths) == set(gone)
    vi.close()


def test_a_consistent_index_opens_without_recovery(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    til_vault(vault, 20)
    engine = Engine(AppPaths(home), embedder_factory=None)
    engine.add_vault(vault)
    engine.sync(embed=False)
    engine.close()
    again = Engine(AppPaths(home), embedder_factory=None)
    assert again.index_for("vault").recovery is None
    assert again.sync(embed=False)[0].keyword.unchanged == 20
    again.close()


# -- a writer elsewhere, as the CLI and the watcher see it ----------------------------------------


def held_elsewhere(home: Path, name: str) -> FileLock:
    """Hold a vault's lock through another open file, as another process would (flock is per open file)."""
    lock = FileLock(str(AppPaths(home).vault_dir(name) / "write.lock"))
    lock.acquire(timeout=5)
    return lock


def test_cairn_status_says_a_first_index_is_being_built_elsewhere(cairn_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, 5)
    Engine(AppPaths(cairn_home), embedder_factory=None).add_vault(vault)
    lock = held_elsewhere(cairn_home, "vault")
    try:
        assert main(["status", "--json"]) == 0
        got = json.loads(capsys.readouterr().out)["vaults"][0]
        assert got["indexing_elsewhere"] and got["state"] == BUSY_STATE and not got["built"]
        assert main(["status"]) == 0
        assert f"state: {BUSY_STATE}" in capsys.readouterr().out
        assert main(["search", "uniq1x"]) != 0
        assert "another Cairn process" in capsys.readouterr().err
    finally:
        lock.release()
    assert not (AppPaths(cairn_home).vault_dir("vault") / "whoosh").exists()  # nothing was created meanwhile
    assert main(["index", "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "uniq1x", "--json"]) == 0
    assert "note-0001.md" in capsys.readouterr().out


def test_a_live_update_defers_while_another_process_writes(tmp_path: Path) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    make_vault(vault, 10)
    engine = Engine(AppPaths(home), embedder_factory=None)
    engine.add_vault(vault)
    engine.sync(embed=False)
    (vault / "topic-03" / "note-0003.md").write_text("# Note 3\n\nrewritten with zanzibar\n", encoding="utf-8")
    lock = held_elsewhere(home, "vault")
    try:
        with pytest.raises(IndexBusyError):
            engine.update_notes("vault", ["topic-03/note-0003.md"])
        engine.flush()  # deferred, not raised: the app's close must never fail on it
    finally:
        lock.release()
    assert keyword_hits(engine, "zanzibar") == set()
    engine.update_notes("vault", ["topic-03/note-0003.md"])
    assert keyword_hits(engine, "zanzibar") == {"topic-03/note-0003.md"}
    engine.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a forked child shares the lock's open file")
def test_a_forked_child_holding_the_inherited_lock_file_does_not_keep_the_vault_locked(tmp_path: Path) -> None:
    """The parallel build forks its worker (Linux) while the vault's lock is held: the child shares
    the lock's open file, so releasing must unlock it, not only close this process's copy."""
    lock = VaultLock(tmp_path)
    read_end, write_end = os.pipe()
    with lock.held(timeout=0):
        pid = os.fork()
        if pid == 0:  # the child: keeps every inherited descriptor open until the parent says so
            os.close(write_end)
            os.read(read_end, 1)
            os._exit(0)
        os.close(read_end)
    try:
        assert not lock.is_held
        other = FileLock(str(lock.path))
        other.acquire(timeout=0)  # free although the child still holds the inherited file open
        other.release()
        assert VaultLock(tmp_path).free()
    finally:
        os.close(write_end)
        os.waitpid(pid, 0)
