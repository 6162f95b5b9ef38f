"""Live from the first minute: edits during a first index, or while nothing watched, are never lost.

Real watchdog, a real synthetic vault of a few thousand notes indexed the way the app
does it (keyword index in a child process, then embeddings), and a supervisor that
restarts a dead observer.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from core.base.errors import IndexNotBuiltError
from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.watcher import ALL_VAULTS, VaultWatcher, WatcherFault
from core.watcher.events import VaultEvents
from tests.helpers import BagOfWordsEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from synth_vault import generate_vault  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

DEBOUNCE = 0.2


def found(engine: Engine, word: str) -> set[str]:
    try:
        resp = engine.search(SearchRequest(word, mode="keyword", k=20, filters=SearchFilters(allow_restricted=True)))
    except IndexNotBuiltError:  # the child process has built it; this process has not reopened it yet
        return set()
    return {h.chunk.rel_path for h in resp.hits}


def wait_until(predicate, timeout: float, what: str) -> float:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"{what} not reached within {timeout:.1f} s")
        time.sleep(0.02)
    return time.monotonic() - t0


class Errors:
    def __init__(self) -> None:
        self.items: list[tuple[str, Exception]] = []
        self._lock = threading.Lock()

    def __call__(self, name: str, exc: Exception) -> None:
        with self._lock:
            self.items.append((name, exc))

    def of(self, kind: type) -> list[Exception]:
        with self._lock:
            return [e for _, e in self.items if isinstance(e, kind)]


def test_edits_during_a_first_index_are_searchable_within_2_s_of_the_keyword_index(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    generate_vault(root, 2500, seed=3)
    notes = sorted(p for p in root.rglob("*.md"))
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=lambda vc: BagOfWordsEmbedder())
    vc = engine.add_vault(root)
    errors = Errors()
    watcher = VaultWatcher(engine, [vc.name], debounce=DEBOUNCE, flush_after=60, on_error=errors)
    watcher.start()  # the vault was just added: its events queue until its keyword index exists
    edits = {"zqxedit" + str(i): notes[i * len(notes) // 6] for i in range(6)}
    new_note = root / "written-during-the-first-index.md"
    keyword_done: list[float] = []

    def progress(done: int, total: int, phase: str) -> None:
        if phase == "keyword" and done >= total // 3 and not new_note.exists():
            for word, path in edits.items():  # some notes indexed already, some still to come
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(f"\n\nAppended while indexing: {word}.\n")
            new_note.write_text("# Fresh\n\nzqxnewnote arrives mid-index.\n", encoding="utf-8")

    def keyword_ready(name: str) -> None:
        keyword_done.append(time.monotonic())

    indexing = threading.Thread(target=lambda: engine.sync([vc.name], progress=progress, bulk_in_child=True, keyword_ready=keyword_ready))
    indexing.start()
    try:
        wait_until(lambda: bool(keyword_done), 300, "keyword index")
        words = [*edits, "zqxnewnote"]
        wait_until(lambda: all(found(engine, w) for w in words), 30, "every edit searchable")
        took = time.monotonic() - keyword_done[0]
        print(f"edits searchable {took:.2f} s after the keyword index completed")
        # Under 2 s on an idle 2-core machine; the margin is for a starved one (5.1 s at load 7, nice 19).
        # What it guards: the edits wait for the keyword index only, not for the embedding that follows.
        assert took < 8.0
        assert {w: found(engine, w) for w in edits} == {w: {p.relative_to(root).as_posix()} for w, p in edits.items()}
        assert found(engine, "zqxnewnote") == {new_note.name}
    finally:
        indexing.join(300)
        watcher.stop()
        engine.close()
    assert errors.items == []


def test_an_edit_made_while_nothing_watched_is_found_at_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAbout herons.\n", encoding="utf-8")
    home = AppPaths(tmp_path / "home")
    engine = Engine(home, embedder_factory=lambda vc: BagOfWordsEmbedder())
    vc = engine.add_vault(root)
    engine.sync()
    engine.close()
    (root / "a.md").write_text("# A\n\nAbout herons and zqxclosed.\n", encoding="utf-8")  # the app is closed
    (root / "b.md").write_text("# B\n\nzqxcreated while closed.\n", encoding="utf-8")
    engine = Engine(home, embedder_factory=lambda vc: BagOfWordsEmbedder())
    watcher = VaultWatcher(engine, [vc.name], debounce=DEBOUNCE)
    watcher.start()
    try:
        assert watcher.wait_caught_up(10)
        assert found(engine, "zqxclosed") == {"a.md"}
        assert found(engine, "zqxcreated") == {"b.md"}
        vv = engine.vectors_for(vc.name)
        assert vv is not None and vv.fraction_complete == 1.0  # the catch-up embedded what changed
    finally:
        watcher.stop()
        engine.close()


@pytest.fixture
def small(tmp_path: Path):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAbout herons.\n", encoding="utf-8")
    engine = Engine(AppPaths(tmp_path / "home"), embedder_factory=None)
    vc = engine.add_vault(root)
    engine.sync()
    errors = Errors()
    watcher = VaultWatcher(engine, [vc.name], debounce=DEBOUNCE, on_error=errors)
    yield root, engine, watcher, errors
    watcher.stop()
    engine.close()


def test_a_handler_that_raises_is_reported_and_the_vault_reconciled(small, monkeypatch: pytest.MonkeyPatch) -> None:
    root, engine, watcher, errors = small
    watcher.start()
    assert watcher.wait_caught_up(10)
    calls = []
    original = VaultEvents.on_any_event

    def flaky(self, event):
        calls.append(event)
        if len(calls) == 1:
            raise RuntimeError("handler broke")
        return original(self, event)

    monkeypatch.setattr(VaultEvents, "on_any_event", flaky)
    (root / "a.md").write_text("# A\n\nzqxfirst edit.\n", encoding="utf-8")
    wait_until(lambda: found(engine, "zqxfirst") == {"a.md"}, 5, "the edit found by the reconcile")
    assert [str(e) for _, e in errors.items] == ["handler broke"]
    (root / "b.md").write_text("# B\n\nzqxlater edit.\n", encoding="utf-8")
    wait_until(lambda: found(engine, "zqxlater") == {"b.md"}, 5, "a later edit")


def test_a_dead_observer_is_restarted_and_reported_and_later_edits_indexed(small, monkeypatch: pytest.MonkeyPatch) -> None:
    root, engine, watcher, errors = small
    watcher.start()
    assert watcher.wait_caught_up(10)
    original = VaultEvents.dispatch
    kills = []

    def deadly(self, event):
        if not kills:
            kills.append(event)
            raise SystemError("observer thread killed")  # past every guard: watchdog's thread ends
        return original(self, event)

    monkeypatch.setattr(VaultEvents, "dispatch", deadly)
    (root / "a.md").write_text("# A\n\nzqxlost edit.\n", encoding="utf-8")
    wait_until(lambda: watcher.restarts == 1, 5, "observer restart")
    faults = errors.of(WatcherFault)
    assert len(faults) == 1 and "observer thread killed" in str(faults[0])
    assert [n for n, _ in errors.items] == [ALL_VAULTS]
    wait_until(lambda: found(engine, "zqxlost") == {"a.md"}, 5, "the edit made while it was down")
    (root / "c.md").write_text("# C\n\nzqxafter restart.\n", encoding="utf-8")
    wait_until(lambda: found(engine, "zqxafter") == {"c.md"}, 5, "an edit after the restart")


def test_a_bad_cairnignore_line_is_reported_and_edits_go_on_before_and_after_the_fix(small) -> None:
    # A bad ignore line is a warning in Index health (the other lines still apply), never a dead watcher.
    root, engine, watcher, errors = small
    watcher.start()
    assert watcher.wait_caught_up(10)
    name = engine.vaults[0].name

    def ignore_warnings() -> list[str]:
        return [w.detail for w in engine.index_for(name).info.warnings if w.code == "ignore_pattern"]

    (root / ".cairnignore").write_text("drafts/\nfoo\\\n", encoding="utf-8")
    wait_until(lambda: ignore_warnings(), 5, "the bad line reported in Index health")
    assert "foo" in ignore_warnings()[0]
    (root / "c.md").write_text("# C\n\nzqxbroken ignore file.\n", encoding="utf-8")
    wait_until(lambda: found(engine, "zqxbroken") == {"c.md"}, 5, "an edit while the line is bad")
    (root / ".cairnignore").write_text("drafts/\n", encoding="utf-8")
    (root / "d.md").write_text("# D\n\nzqxfixed ignore file.\n", encoding="utf-8")
    wait_until(lambda: found(engine, "zqxfixed") == {"d.md"}, 5, "an edit after the fix")
    wait_until(lambda: not ignore_warnings(), 5, "the warning gone once the file is fixed")
    assert watcher.restarts == 0 and errors.items == []
