"""Kill -9 harness shared by `tests/core/test_crash_recovery.py` and `bench/torture.py`.

A child process opens an `Engine` on a vault and edits notes the way the live path
does (a few saves, one `update_notes` for them, now and then a `flush`), or edits a
batch and runs a full `sync`. Before each disk change it appends the paths to a journal, and after each
flush (or completed sync) a `flushed` line, so the parent knows which notes may be
newer on disk than in the persisted index. The parent kills it with SIGKILL, then
`recover()` opens a new engine on the same data dir, syncs, and checks the result
against an index built from scratch.

The child uses `BagOfWordsEmbedder`: the real model would make every trial seconds
slower without exercising any other code path of the recovery.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from core.base.errors import IndexNotBuiltError  # noqa: E402
from core.base.models import chunk_id  # noqa: E402
from core.base.paths import AppPaths  # noqa: E402
from core.engine import Engine  # noqa: E402
from core.index.manifest import load_manifest  # noqa: E402
from core.index.vector_index import key_for  # noqa: E402
from core.search.search import SearchRequest  # noqa: E402
from tests.helpers import BagOfWordsEmbedder  # noqa: E402

VAULT = "v"
MODES = ("live", "sync", "watch")  # watch: the real watcher thread indexes and flushes the edits
FIRST = "first"  # a vault's first build, from an empty data dir: killed, it must not brick the folder
_WORDS = (
    "harbour lantern orchard quarry meadow glacier falcon willow ember cobalt thistle saffron "
    "juniper basalt marble cedar violet tundra canyon pebble bramble heron otter maple"
).split()


def make_vault(root: Path, n: int, seed: int = 1) -> None:
    """`n` notes in a few folders, some long enough for several chunks."""
    rng = random.Random(seed)
    for i in range(n):
        folder = root / ("", "projects", "journal", "projects/deep")[i % 4]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:03d}.md").write_text(_note_text(rng, f"Note {i}"), encoding="utf-8")


def _note_text(rng: random.Random, title: str) -> str:
    parts = [f"# {title}\n"]
    for s in range(rng.randint(1, 4)):
        parts.append(f"\n## Section {s}\n\n")
        parts.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 160))) + "\n")
    return "".join(parts)


def _notes(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if p.is_file())


_recent: list[str] = []  # paths the child touched, newest last


def _random_edit(rng: random.Random, root: Path, journal) -> list[str]:  # type: ignore[no-untyped-def]
    """One edit of the vault; the touched paths are journaled before the disk changes."""
    notes = _notes(root)
    roll = rng.random()
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731

    def pick(candidates: list[Path]) -> Path:
        """Half the time a note touched lately: people keep editing the same few notes."""
        recent_on_disk = [p for p in (root / r for r in _recent[-8:]) if p.is_file()]
        return rng.choice(recent_on_disk) if recent_on_disk and rng.random() < 0.5 else rng.choice(candidates)
    if roll < 0.15 or len(notes) < 10:
        folder = rng.choice(["", "projects", "journal", "inbox/new"])
        target = root / folder / f"new-{rng.randrange(10**9):09d}.md"
        paths, action = [rel(target)], lambda: (target.parent.mkdir(parents=True, exist_ok=True), target.write_text(_note_text(rng, "New"), encoding="utf-8"))
    elif roll < 0.25:
        victim = pick(notes)
        paths, action = [rel(victim)], victim.unlink
    elif roll < 0.40:
        src = pick(notes)
        dest = src.with_name(f"renamed-{rng.randrange(10**9):09d}.md")
        paths, action = [rel(src), rel(dest)], lambda: os.rename(src, dest)
    elif roll < 0.50:  # an editor's atomic save: temp file, then rename onto the note
        note = pick(notes)
        text = _note_text(rng, "Saved")

        def action() -> None:
            tmp = note.with_name(f".{note.name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, note)

        paths = [rel(note)]
    else:
        note = pick(notes)
        text = note.read_text(encoding="utf-8") + f"\nEdited: {rng.choice(_WORDS)} {rng.randrange(10**6)}.\n"
        paths, action = [rel(note)], lambda: note.write_text(text, encoding="utf-8")
    journal.write("edit " + json.dumps(paths) + "\n")
    journal.flush()
    action()
    _recent.extend(paths)
    return paths


def child_main(argv: list[str]) -> None:
    """`python -c ... child_main([home, vault, mode, seed, journal])`: edit until killed."""
    home, vault, mode, seed, journal_path = argv
    rng = random.Random(int(seed))
    root = Path(vault)
    if mode == FIRST:
        with open(journal_path, "a", encoding="utf-8") as journal:
            journal.write("ready\n")  # before the engine: a kill may land while config.json is written
            journal.flush()
            engine = Engine(AppPaths(Path(home)), embedder_factory=lambda vc: BagOfWordsEmbedder())
            if VAULT not in {v.name for v in engine.vaults}:
                engine.add_vault(root, name=VAULT)
            engine.sync([VAULT])
            journal.write("flushed\n")
            journal.flush()
            time.sleep(3600)  # wait for the kill: a child that exits on its own is an error
    engine = Engine(AppPaths(Path(home)), embedder_factory=lambda vc: BagOfWordsEmbedder())
    if mode == "watch":
        _watch_until_killed(engine, rng, root, journal_path)
    with open(journal_path, "a", encoding="utf-8") as journal:
        journal.write("ready\n")
        journal.flush()
        while True:
            if mode == "live":
                # A debounce window's worth of saves, then one update for all of them: the disk
                # runs ahead of the index for a while, as it does behind the watcher.
                paths = []
                for _ in range(rng.randint(1, 4)):
                    paths += _random_edit(rng, root, journal)
                    time.sleep(rng.uniform(0.0, 0.02))
                engine.update_notes(VAULT, paths)
                if rng.random() < 0.25:
                    engine.flush([VAULT])
                    journal.write("flushed\n")
                    journal.flush()
            else:
                for _ in range(rng.randint(1, 12)):
                    _random_edit(rng, root, journal)
                engine.sync([VAULT])
                journal.write("flushed\n")
                journal.flush()


def _watch_until_killed(engine: Engine, rng: random.Random, root: Path, journal_path: str) -> None:
    """Edit the vault while the real watcher (its own threads, short debounce and flush delay)
    indexes and flushes behind the edits. No edit is ever marked flushed: the watcher flushes
    on its own clock, so every edit may be in flight when the kill lands."""
    from core.watcher import VaultWatcher

    watcher = VaultWatcher(engine, [VAULT], debounce=0.05, flush_after=0.2)
    watcher.start()
    with open(journal_path, "a", encoding="utf-8") as journal:
        journal.write("ready\n")
        journal.flush()
        while True:
            _random_edit(rng, root, journal)
            time.sleep(rng.uniform(0.0, 0.08))


def run_child(home: Path, vault: Path, mode: str, seed: int, journal: Path, kill_after: float) -> tuple[int, float]:
    """Start a child, let it run `kill_after` seconds after it is ready, SIGKILL it."""
    journal.write_text("")
    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); from tests.crash_harness import child_main; child_main(sys.argv[1:])"
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(home), str(vault), mode, str(seed), str(journal)],
        cwd=str(REPO),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not journal.read_text().startswith("ready"):
        if proc.poll() is not None:
            raise RuntimeError(f"crash child exited early ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("crash child never became ready")
        time.sleep(0.01)
    started = time.monotonic()
    time.sleep(kill_after)
    if proc.poll() is not None:
        raise RuntimeError(f"crash child died on its own ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    return proc.returncode, time.monotonic() - started


def unflushed_edits(journal: Path) -> tuple[set[str], int]:
    """Paths edited since the last completed flush (or sync), and the number of edits in all."""
    since: set[str] = set()
    edits = 0
    for line in journal.read_text().splitlines():
        if line == "flushed":
            since = set()
        elif line.startswith("edit "):
            edits += 1
            since.update(json.loads(line[5:]))
    return since, edits


@dataclass
class Recovery:
    recovery: str | None  # what the index found on opening: dirty_flag | manifest_rebuilt | keyword_index_damaged | None
    notes: int
    reparsed: int  # notes parsed again by the recovery sync
    embedded: int  # chunks sent to the embedder by the recovery sync
    from_cache: int
    unflushed: int  # notes edited since the last flush: the most the recovery should re-parse
    problems: list[str] = field(default_factory=list)

    @property
    def full_rebuild(self) -> bool:
        return self.recovery == "keyword_index_damaged" or (self.notes > 10 and self.reparsed >= self.notes)

    @property
    def ok(self) -> bool:
        return not self.problems


def keyword_rows(engine: Engine) -> list[tuple[str, int, str, str, str]]:
    rows = engine.index_for(VAULT).keyword.all_stored()
    return sorted((r.rel_path, r.ordinal, r.heading_path, r.body, r.document_version) for r in rows)


def _differs_from_fresh(engine: Engine, vault: Path, fresh_home: Path) -> list[str]:
    """How the recovered keyword index and manifest differ from a from-scratch build of the same vault."""
    problems: list[str] = []
    vi = engine.index_for(VAULT)
    fresh = Engine(AppPaths(fresh_home), embedder_factory=None)
    fresh.add_vault(vault, name=VAULT)
    fresh.sync([VAULT], embed=False)
    want_rows, got_rows = keyword_rows(fresh), keyword_rows(engine)
    if got_rows != want_rows:
        extra = Counter(got_rows) - Counter(want_rows)
        missing = Counter(want_rows) - Counter(got_rows)
        problems.append(
            f"keyword index differs from a fresh build: {sum(extra.values())} extra rows "
            f"{sorted({r[0] for r in extra})[:5]}, {sum(missing.values())} missing {sorted({r[0] for r in missing})[:5]}"
        )
    want_files = {rel: (r.version, r.chunks) for rel, r in fresh.index_for(VAULT).files.items()}
    got_files = {rel: (r.version, r.chunks) for rel, r in vi.files.items()}
    if got_files != want_files:
        problems.append(f"manifest differs from a fresh build: {sorted(set(got_files) ^ set(want_files))[:5]}")
    fresh.close()
    return problems


def recover(home: Path, fresh_home: Path, vault: Path, unflushed: set[str]) -> Recovery:
    """Open the crashed data dir, sync, and compare everything with a from-scratch build.

    Before the sync, `status` and a search must work (or say the index is not built): a killed
    first build used to leave a folder that made both end in IsADirectoryError for good.
    """
    early: list[str] = []
    engine = Engine(AppPaths(home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    try:
        if VAULT not in {v.name for v in engine.vaults}:  # killed before the first build registered it
            engine.add_vault(vault, name=VAULT)
        for what, call in (("status", engine.status), ("search", lambda: engine.search(SearchRequest("harbour", mode="keyword")))):
            try:
                call()
            except IndexNotBuiltError:
                pass
            except Exception as exc:  # noqa: BLE001 - any other error is what this harness looks for
                early.append(f"{what} after the crash raised {type(exc).__name__}: {exc}")
        vi = engine.index_for(VAULT)
        state = vi.recovery
        (report,) = engine.sync([VAULT])
        kw, emb = report.keyword, report.embedding
        result = Recovery(
            state, kw.documents, kw.added + kw.changed, emb.embedded if emb else -1, emb.from_cache if emb else -1, len(unflushed)
        )
        problems = result.problems
        problems.extend(early)
        problems.extend(_differs_from_fresh(engine, vault, fresh_home))
        on_disk = load_manifest(vi.manifest_path)
        if on_disk is None or on_disk[1] != vi.files:
            problems.append("manifest on disk differs from the one in memory after the sync")
        if vi.is_dirty or vi.recovery is not None or vi.info.state != "healthy":
            problems.append(f"index not healthy: dirty={vi.is_dirty} recovery={vi.recovery} state={vi.info.state}")
        if engine.is_dirty(VAULT):
            problems.append("engine still dirty after the sync")
        problems.extend(_vector_problems(engine, "after recovery"))
    finally:
        engine.close()
    # A second start must find nothing to do: what the recovery wrote is complete.
    again = Engine(AppPaths(home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    try:
        vv = again.vectors_for(VAULT)
        if vv is None or vv.status != "ok":
            problems.append(f"vectors on disk not ok after recovery: {vv.status if vv else None}")
        (report,) = again.sync([VAULT])
        kw, emb = report.keyword, report.embedding
        if kw.added or kw.changed or kw.removed or (emb is not None and (emb.embedded or emb.removed)):
            problems.append(f"second start still had work: +{kw.added} ~{kw.changed} -{kw.removed}, embedded {emb.embedded if emb else None}")
        problems.extend(_vector_problems(again, "after restart"))
    finally:
        again.close()
    return result


def _vector_problems(engine: Engine, when: str) -> list[str]:
    vv = engine.vectors_for(VAULT)
    if vv is None:
        return [f"no vectors {when}"]
    files = engine.index_for(VAULT).files
    wanted = {key_for(chunk_id(VAULT, rel, c.ordinal)): c.text_hash for rel, rec in files.items() for c in rec.chunks}
    problems = []
    if vv.key_hash != wanted:
        missing = len(set(wanted) - set(vv.key_hash))
        extra = len(set(vv.key_hash) - set(wanted))
        stale = sum(1 for k in set(wanted) & set(vv.key_hash) if wanted[k] != vv.key_hash[k])
        problems.append(f"vectors {when}: {missing} chunks without a vector, {extra} extra, {stale} stale")
    if len(vv.index) != len(wanted):
        problems.append(f"vector index {when} holds {len(vv.index)} vectors for {len(wanted)} chunks")
    return problems


def build(home: Path, vault: Path) -> None:
    engine = Engine(AppPaths(home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    engine.add_vault(vault, name=VAULT)
    engine.sync([VAULT])
    engine.close()
