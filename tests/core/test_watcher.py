"""The live watcher on a real folder: every way editors save reaches the index, nothing else does.

Real watchdog (inotify on Linux) on a temporary vault, a short debounce, and polling with a deadline:
a test waits for the search to show a change, never for a fixed time.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters, chunk_id
from core.base.paths import AppPaths
from core.engine import Engine
from core.index.manifest import load_manifest
from core.index.vector_index import key_for
from core.search.search import SearchRequest
from core.vault.notes import document_version
from core.vault.scanner import Scanner
from core.watcher import LiveUpdate, VaultWatcher
from tests.helpers import BagOfWordsEmbedder

DEBOUNCE = 0.25
DEADLINE = 20.0  # debounce + 1 s of processing; the margin is for a starved machine (a child extracts a .docx)
VAULT = "notes"

# watchdog's inotify emitter warns when a folder created with its parent gets its watch twice
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


def wait_until(predicate: Callable[[], object], timeout: float = DEADLINE, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not reached within {timeout:.1f} s")
        time.sleep(0.02)


def vault_digest(root: Path) -> dict[str, str]:
    """Hash of every file and a marker for every folder: proves Cairn wrote nothing into the vault."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = "dir"
        for name in filenames:
            path = Path(dirpath) / name
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


class Recorder:
    """Collects what the watcher reports, from its own thread."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.updates: list[LiveUpdate] = []
        self.errors: list[tuple[str, Exception]] = []
        self.dirty_after_update: list[bool] = []
        self._lock = threading.Lock()

    def on_update(self, update: LiveUpdate) -> None:
        # read here, on the watcher thread: the deferred flush cannot have run yet
        dirty = self.engine.index_for(update.vault).is_dirty
        with self._lock:
            # the flag first: a test that sees the update must also see its flag
            self.dirty_after_update.append(dirty)
            self.updates.append(update)

    def on_error(self, name: str, exc: Exception) -> None:
        with self._lock:
            self.errors.append((name, exc))

    def reindexed_paths(self) -> set[str]:
        with self._lock:
            return {p for u in self.updates for p in u.paths}

    def reconciles(self) -> int:
        with self._lock:
            return sum(1 for u in self.updates if u.reconciled)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "projects" / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".obsidian").mkdir()
    (root / "alpha.md").write_text("# Alpha\n\nThe alpha note talks about marmalade.\n")
    (root / "beta.md").write_text("# Beta\n\nBeta is about lighthouses.\n")
    (root / "projects" / "gamma.md").write_text("# Gamma\n\nGamma plans the orchard.\n")
    (root / "projects" / "sub" / "delta.md").write_text("# Delta\n\nDelta counts the kestrels.\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".obsidian" / "app.json").write_text("{}\n")
    (root / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return root


@pytest.fixture
def engine(vault: Path, cairn_home: Path) -> Iterator[Engine]:
    eng = Engine(AppPaths(cairn_home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(vault, name=VAULT)
    eng.sync()
    yield eng
    eng.close()


@pytest.fixture
def recorder(engine: Engine) -> Recorder:
    return Recorder(engine)


@pytest.fixture
def watch(engine: Engine, recorder: Recorder) -> Iterator[Callable[..., VaultWatcher]]:
    """Starts a watcher (options may be overridden); always stopped, and no error reported."""
    started: list[VaultWatcher] = []

    def start(debounce: float = DEBOUNCE, flush_after: float = 60.0) -> VaultWatcher:
        w = VaultWatcher(engine, debounce=debounce, flush_after=flush_after, on_update=recorder.on_update, on_error=recorder.on_error)
        w.start()
        started.append(w)
        assert w.wait_caught_up(DEADLINE)  # the start-up reconcile ran: what follows is live
        return w

    yield start
    for w in started:
        w.stop()
    assert recorder.errors == []


def found(engine: Engine, query: str) -> set[str]:
    resp = engine.search(SearchRequest(query, mode="keyword", k=50, filters=SearchFilters(allow_restricted=True)))
    return {h.chunk.rel_path for h in resp.hits}


def indexed(engine: Engine) -> set[str]:
    return set(engine.index_for(VAULT).files)


def vectors_match_manifest(engine: Engine) -> bool:
    vv = engine.vectors_for(VAULT)
    assert vv is not None
    files = dict(engine.index_for(VAULT).files)
    wanted = {key_for(chunk_id(VAULT, rel, c.ordinal)): c.text_hash for rel, rec in files.items() for c in rec.chunks}
    return dict(vv.key_hash) == wanted and len(vv.index) == len(wanted)


def in_step(engine: Engine, vault: Path) -> bool:
    """The index names exactly the notes on disk, at their current content, each chunk with its vector."""
    on_disk = {e.rel_path: document_version(e.path.read_bytes()) for e in Scanner(vault).scan().entries}
    try:
        held = {rel: rec.version for rel, rec in engine.index_for(VAULT).files.items()}
        return held == on_disk and vectors_match_manifest(engine)
    except RuntimeError:  # the watcher thread changed the dict while we read it
        return False


def settle(engine: Engine, vault: Path, recorder: Recorder, *paths: str) -> None:
    """Wait until the index has caught up with the disk and the watcher has reported `paths`."""
    wait_until(lambda: in_step(engine, vault), what="index in step with the vault")
    wait_until(lambda: set(paths) <= recorder.reindexed_paths(), what=f"re-index of {paths} reported")


# -- single notes ----------------------------------------------------------------------------


def test_modified_note_is_searchable_after_the_debounce(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    (vault / "beta.md").write_text("# Beta\n\nBeta is now about zeppelins.\n")
    wait_until(lambda: found(engine, "zeppelins") == {"beta.md"}, what="edited note searchable")
    settle(engine, vault, recorder, "beta.md")
    assert found(engine, "lighthouses") == set()
    assert recorder.reindexed_paths() == {"beta.md"}


def test_created_note_is_added(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    (vault / "epsilon.md").write_text("# Epsilon\n\nA new note on quinces.\n")
    settle(engine, vault, recorder, "epsilon.md")
    assert found(engine, "quinces") == {"epsilon.md"}
    assert "epsilon.md" in indexed(engine)


def test_deleted_note_is_removed(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    (vault / "alpha.md").unlink()
    settle(engine, vault, recorder, "alpha.md")
    assert found(engine, "marmalade") == set()
    assert "alpha.md" not in indexed(engine)


def test_renamed_note_moves_to_its_new_path(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    os.rename(vault / "alpha.md", vault / "omega.md")
    settle(engine, vault, recorder, "alpha.md", "omega.md")
    assert found(engine, "marmalade") == {"omega.md"}
    assert "alpha.md" not in indexed(engine)


def test_a_rename_that_only_changes_case_moves_the_note(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    """What a user does on macOS or Windows to fix a title's capitals (a single move event there too)."""
    watch()
    os.rename(vault / "alpha.md", vault / "Alpha.md")
    settle(engine, vault, recorder, "alpha.md", "Alpha.md")
    assert found(engine, "marmalade") == {"Alpha.md"}
    assert "alpha.md" not in indexed(engine)


def test_a_note_named_in_nfd_is_indexed_under_its_nfc_name(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    """macOS hands out decomposed names; the index keys them composed, as the scanner does."""
    watch()
    nfd = unicodedata.normalize("NFD", "Crème brûlée.md")
    (vault / nfd).write_text("# Crème brûlée\n\nTorch the sugar.\n", encoding="utf-8")
    nfc = unicodedata.normalize("NFC", "Crème brûlée.md")
    settle(engine, vault, recorder, nfc)
    assert found(engine, "torch") == {nfc}
    (vault / nfd).unlink()
    wait_until(lambda: nfc not in indexed(engine), what="the NFD-named note removed")
    wait_until(lambda: in_step(engine, vault), what="index in step with the vault")
    assert found(engine, "torch") == set()


def test_atomic_save_through_a_temp_file_and_rename(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    tmp = vault / ".beta.md.tmp-4711"
    tmp.write_text("# Beta\n\nSaved atomically: harpsichords.\n")
    os.replace(tmp, vault / "beta.md")  # no `modified` event for beta.md arrives
    settle(engine, vault, recorder, "beta.md")
    assert found(engine, "harpsichords") == {"beta.md"}
    assert found(engine, "lighthouses") == set()
    assert indexed(engine) == {"alpha.md", "beta.md", "projects/gamma.md", "projects/sub/delta.md"}


def test_vim_save_pattern_backup_rename_write_delete(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    note = vault / "beta.md"
    backup = vault / "beta.md~"
    os.rename(note, backup)
    note.write_text("# Beta\n\nWritten by vim: trombones.\n")
    backup.unlink()
    settle(engine, vault, recorder, "beta.md")
    assert found(engine, "trombones") == {"beta.md"}
    assert found(engine, "lighthouses") == set()
    assert "beta.md~" not in indexed(engine)


# -- folders ---------------------------------------------------------------------------------


def test_renamed_folder_moves_every_note_below_it(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    os.rename(vault / "projects", vault / "work")
    settle(engine, vault, recorder)
    assert indexed(engine) == {"alpha.md", "beta.md", "work/gamma.md", "work/sub/delta.md"}
    assert found(engine, "orchard") == {"work/gamma.md"}
    assert found(engine, "kestrels") == {"work/sub/delta.md"}


def test_note_in_a_new_subfolder_is_added(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    (vault / "projects" / "fresh").mkdir()
    (vault / "projects" / "fresh" / "zeta.md").write_text("# Zeta\n\nZeta grows saffron.\n")
    settle(engine, vault, recorder)
    assert found(engine, "saffron") == {"projects/fresh/zeta.md"}


def test_note_moved_into_a_freshly_created_folder(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    (vault / "archive").mkdir()
    os.rename(vault / "beta.md", vault / "archive" / "beta.md")
    settle(engine, vault, recorder)
    assert found(engine, "lighthouses") == {"archive/beta.md"}
    # the late `deleted` event for the old path must not undo the move
    (vault / "alpha.md").write_text("# Alpha\n\nSentinel: pomegranate.\n")
    settle(engine, vault, recorder, "alpha.md")
    assert found(engine, "pomegranate") == {"alpha.md"}
    assert found(engine, "lighthouses") == {"archive/beta.md"}
    assert indexed(engine) == {"alpha.md", "archive/beta.md", "projects/gamma.md", "projects/sub/delta.md"}


def test_a_pdf_dropped_into_the_vault_is_searchable_with_its_page(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    from tests.pdf_writer import make_pdf

    watch()
    tmp = vault / "report.pdf.part"
    tmp.write_bytes(make_pdf([["Intro"], ["The okapi lives in the Ituri forest."]]))
    tmp.rename(vault / "report.pdf")  # a browser's download: written aside, then renamed
    settle(engine, vault, recorder, "report.pdf")
    hits = engine.search(SearchRequest("okapi", mode="keyword")).hits
    assert [(h.chunk.rel_path, h.page) for h in hits] == [("report.pdf", 2)]


def test_a_mailbox_and_a_word_file_dropped_in_are_searchable_by_heading(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    from tests.kinds_writer import write_docx, write_mbox

    watch()
    write_mbox(vault / "box.tmp", 3).rename(vault / "team.mbox")
    settle(engine, vault, recorder, "team.mbox")
    write_docx(vault / "report.tmp").rename(vault / "report.docx")
    settle(engine, vault, recorder, "report.docx")
    (mail,) = engine.search(SearchRequest('"Observer 2 counted"', mode="keyword")).hits
    assert (mail.chunk.rel_path, mail.chunk.heading_path) == ("team.mbox", "Survey 2: sighting of species 2 (2024-01-03)")
    (word,) = engine.search(SearchRequest("binoculars", mode="keyword")).hits
    assert word.chunk.rel_path == "report.docx" and "Budget" in word.chunk.heading_path


def test_a_pdf_saved_again_in_place_is_re_read_and_a_deleted_one_leaves(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    from tests.pdf_writer import make_pdf

    (vault / "report.pdf").write_bytes(make_pdf([["Intro"], ["The okapi lives in the Ituri forest."]]))
    engine.sync([VAULT], embed=False)
    watch()
    # A PDF editor saves over the file: same name, new bytes, the okapi gone and a tapir on page 3.
    (vault / "report.pdf").write_bytes(make_pdf([["Intro"], ["Forest animals."], ["The tapir browses at dusk."]]))
    settle(engine, vault, recorder, "report.pdf")
    assert [(h.chunk.rel_path, h.page) for h in engine.search(SearchRequest("tapir", mode="keyword")).hits] == [("report.pdf", 3)]
    assert not engine.search(SearchRequest("okapi", mode="keyword")).hits
    (vault / "report.pdf").unlink()
    wait_until(lambda: "report.pdf" not in engine.index_for(VAULT).files, what="deleted PDF dropped")
    assert not engine.search(SearchRequest("tapir", mode="keyword")).hits


def test_a_folder_made_restricted_hides_its_pdf_live(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    from tests.pdf_writer import write_pdf

    write_pdf(vault / "clients" / "contract.pdf", [["The retainer is paid quarterly."]])
    engine.sync([VAULT], embed=False)
    watch()

    def visible() -> set[str]:
        return {h.chunk.rel_path for h in engine.search(SearchRequest("retainer", mode="keyword")).hits}

    assert visible() == {"clients/contract.pdf"}
    (vault / "clients" / ".cairn.yaml").write_text("confidentiality: restricted\n")
    wait_until(lambda: visible() == set(), what="PDF hidden once its folder is restricted")
    wait_until(lambda: recorder.reconciles() >= 1, what="the settings change reported as a reconcile")
    assert found(engine, "retainer") == {"clients/contract.pdf"}  # still there for who may see it


# -- what must not re-index -------------------------------------------------------------------


def test_ignored_folders_and_non_note_files_trigger_nothing(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    (vault / ".git" / "objects" / "ab").mkdir(parents=True)
    (vault / ".git" / "objects" / "ab" / "cdef").write_bytes(b"blob")
    (vault / ".git" / "HEAD.md").write_text("# not a note\n")
    (vault / ".obsidian" / "workspace.json").write_text('{"active": "beta.md"}\n')
    (vault / ".obsidian" / "snippets").mkdir()
    (vault / ".obsidian" / "snippets" / "style.md").write_text("# css notes\n")
    (vault / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\nmore")  # images are read only with OCR switched on
    (vault / "todo.xlsx").write_bytes(b"PK\x03\x04 not indexed")  # spreadsheets are not read (core.vault.kinds)
    # A real edit afterwards: events are delivered in order, so once it is indexed the
    # ignored ones above have been seen too (no fixed sleep needed).
    (vault / "beta.md").write_text("# Beta\n\nSentinel: cassowary.\n")
    settle(engine, vault, recorder, "beta.md")
    assert found(engine, "cassowary") == {"beta.md"}
    assert recorder.reindexed_paths() == {"beta.md"}
    assert recorder.reconciles() == 0
    assert found(engine, "css") == set()


def test_chmod_touch_open_and_close_do_not_reindex(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    watch()
    note = vault / "alpha.md"
    os.chmod(note, 0o600)
    os.chmod(vault / "projects", 0o750)
    with note.open("rb") as fh:
        fh.read()
    with note.open("ab"):
        pass  # opened for writing, nothing written
    st = note.stat()
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # `touch`: new mtime, same bytes
    (vault / "beta.md").write_text("# Beta\n\nSentinel: armadillos.\n")
    settle(engine, vault, recorder, "beta.md")
    assert found(engine, "armadillos") == {"beta.md"}
    assert recorder.reindexed_paths() == {"beta.md"}
    assert recorder.reconciles() == 0
    for u in recorder.updates:
        assert u.report.keyword.changed + u.report.keyword.added + u.report.keyword.removed > 0, u


# -- persistence: dirty flag, deferred flush, stop --------------------------------------------


def test_live_update_sets_the_dirty_flag_and_the_deferred_flush_clears_it(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    vi = engine.index_for(VAULT)
    assert not vi.is_dirty
    watch(flush_after=0.5)
    (vault / "gamma-notes.md").write_text("# More\n\nA flush must persist the wombats.\n")
    wait_until(lambda: recorder.updates, what="live update")
    assert recorder.dirty_after_update[0] is True  # memory ahead of disk, said so on disk
    wait_until(lambda: not engine.is_dirty(VAULT), what="deferred flush")
    assert not vi.dirty_path.exists()
    on_disk = load_manifest(vi.manifest_path)
    assert on_disk is not None and "gamma-notes.md" in on_disk[1]


def test_stop_processes_pending_events_then_flushes(engine: Engine, vault: Path, watch, recorder: Recorder) -> None:
    vi = engine.index_for(VAULT)
    watcher = watch(debounce=30.0)  # the debounce never expires: only stop() can process the edit
    raw = b"# Beta\n\nEdited just before closing: narwhals.\n"
    (vault / "beta.md").write_bytes(raw)
    wait_until(lambda: watcher.pending, what="event received")
    assert recorder.updates == []
    watcher.stop()
    assert found(engine, "narwhals") == {"beta.md"}
    assert not engine.is_dirty(VAULT) and not vi.dirty_path.exists()
    on_disk = load_manifest(vi.manifest_path)
    assert on_disk is not None and on_disk[1]["beta.md"].version == document_version(raw)
    assert in_step(engine, vault)


def test_cairn_never_writes_into_the_vault(engine: Engine, vault: Path, watch) -> None:
    watcher = watch(flush_after=0.3)
    (vault / "beta.md").write_text("# Beta\n\nChecked byte for byte: ocelots.\n")
    (vault / "projects" / "new.md").write_text("# New\n\nAnd a new one: ibexes.\n")
    os.rename(vault / "projects" / "sub", vault / "projects" / "moved")
    before = vault_digest(vault)
    wait_until(lambda: in_step(engine, vault), what="edits indexed")
    assert found(engine, "ocelots") == {"beta.md"} and found(engine, "ibexes") == {"projects/new.md"}
    wait_until(lambda: not engine.is_dirty(VAULT), what="deferred flush")
    watcher.stop()
    assert vault_digest(vault) == before


# -- the live path on its own ------------------------------------------------------------------


def test_live_update_on_a_vault_never_embedded_embeds_only_the_edited_note(vault: Path, cairn_home: Path) -> None:
    embedder = BagOfWordsEmbedder()
    eng = Engine(AppPaths(cairn_home), embedder_factory=lambda vc: embedder)
    eng.add_vault(vault, name=VAULT)
    eng.sync(embed=False)  # keyword only, as `cairn index --no-embed` leaves it
    (vault / "beta.md").write_text("# Beta\n\nOne edit must not embed the whole vault.\n")
    report = eng.update_notes(VAULT, ["beta.md"])
    chunks = len(eng.index_for(VAULT).files["beta.md"].chunks)
    assert report.embedding is not None and report.embedding.embedded == chunks
    assert embedder.texts_embedded == chunks
    eng.close()


def test_renaming_and_deleting_a_note_moves_its_backlinks(engine: Engine, vault: Path, watch: Callable[..., VaultWatcher]) -> None:
    (vault / "beta.md").write_text("# Beta\n\nBeta is about lighthouses, see [[alpha]].\n")
    engine.update_notes(VAULT, ["beta.md"])
    graph = engine.index_for(VAULT).links
    assert {r.source for r in graph.backlinks("alpha.md")} == {"beta.md"}
    watch()
    (vault / "beta.md").rename(vault / "projects" / "beacon.md")
    wait_until(lambda: {r.source for r in graph.backlinks("alpha.md")} == {"projects/beacon.md"}, what="backlink follows the rename")
    (vault / "alpha.md").unlink()
    wait_until(lambda: "alpha.md" not in graph and [r.link.target for r in graph.unresolved()] == ["alpha"], what="link left dead")


def test_an_edit_while_another_process_writes_the_index_is_deferred_then_indexed(
    engine: Engine, vault: Path, watch, recorder: Recorder, cairn_home: Path
) -> None:
    from filelock import FileLock

    watch()
    other = FileLock(str(AppPaths(cairn_home).vault_dir(VAULT) / "write.lock"))  # `cairn index` elsewhere
    other.acquire(timeout=5)
    try:
        (vault / "beta.md").write_text("# Beta\n\nBeta is now about zeppelins.\n")
        time.sleep(DEBOUNCE * 4 + 2.5)  # past the debounce and a lock wait: deferred, not failed
        assert found(engine, "zeppelins") == set()
    finally:
        other.release()
    wait_until(lambda: found(engine, "zeppelins") == {"beta.md"}, what="deferred edit indexed once the lock is free")
    settle(engine, vault, recorder, "beta.md")
