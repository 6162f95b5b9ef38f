"""Live indexing: a `VaultWatcher` kept on its own thread, its news relayed to the GUI thread.

`VaultWatcher` runs watchdog's threads and its own debounce thread, and calls
back from them. `WatchWorker` owns the watcher and lives on a dedicated
QThread, so starting, restarting and stopping it (which joins threads and may
flush indexes to disk) never blocks the GUI. `LiveIndexing` is the GUI-side
half: it sends requests to the worker with queued signals and re-emits the
worker's signals on the GUI thread, so waiting on them in tests is safe and
slots may touch widgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from core.engine import Engine
from core.watcher import ALL_VAULTS, LiveUpdate, VaultWatcher
from desktop.workers import user_message

#: How long after the last live change the watcher writes the manifest and vectors to disk.
FLUSH_AFTER_S = 30.0


def touched(update: LiveUpdate) -> bool:
    """Whether the update changed what a search can find (a save without changes does not)."""
    kw = update.report.keyword
    return bool(update.reconciled or kw.added or kw.changed or kw.removed)


def describe_update(update: LiveUpdate) -> str:
    """The status-bar sentence for a live update: 'Re-indexed Recipes/Sourdough loaf.md (35 ms)'."""
    kw = update.report.keyword
    took = f"({update.processing_ms:.0f} ms)"
    if update.reconciled or not update.paths:
        return f"Re-indexed {update.vault} after a folder change {took}"
    if len(update.paths) == 1:
        path = update.paths[0]
        if path in kw.removed_paths:
            return f"Removed {path} from the index {took}"
        return f"Re-indexed {path} {took}"
    return f"Re-indexed {len(update.paths)} notes in {update.vault} {took}"


class WatchWorker(QObject):
    """Owns one `VaultWatcher` at a time; every slot runs on the worker's own thread.

    Signals:
        updated: A `LiveUpdate`; emitted from the watcher's thread (connect queued).
        failed: A message for the user; live indexing goes on where it can.
        watching: The vault names now watched (after a start or restart; empty when off).
        caughtUp: A watched vault's catch-up reconcile ran: it is live and in step (watcher's thread).
        stopped: A stop request with this token finished: watcher stopped, indexes flushed.
    """

    updated = Signal(object)
    failed = Signal(str)
    watching = Signal(object)
    caughtUp = Signal(str)
    stopped = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self._watcher: VaultWatcher | None = None

    @Slot(object, object, float)
    def watch(self, engine: Engine, names: Sequence[str], debounce: float) -> None:
        """Watch these vaults: the same engine's watcher takes the new list in place (a vault
        being indexed keeps its queued events); another engine's is stopped and flushed first."""
        live = [n for n in names if _root_exists(engine, n)]  # a missing folder was reported by indexing
        current = self._watcher
        if current is not None and current.engine is engine and live:
            current.set_names(live)
            self.watching.emit(tuple(live))
            return
        self._stop(flush=True)
        if live:
            watcher = VaultWatcher(
                engine,
                live,
                debounce=debounce,
                flush_after=FLUSH_AFTER_S,
                on_update=self.updated.emit,
                on_error=partial(self._on_error, engine),
                on_caught_up=self.caughtUp.emit,
            )
            try:
                watcher.start()
            except Exception as exc:  # e.g. the system's inotify watch limit: search still works, just not live
                self.failed.emit(f"Live updates are off: {user_message(exc)}")
                live = []
            else:
                self._watcher = watcher
        self.watching.emit(tuple(live))

    @Slot(float)
    def set_debounce(self, seconds: float) -> None:
        if self._watcher is not None:
            self._watcher.debounce = seconds  # read afresh by the watcher's loop on every wait

    @Slot(int, object, bool)
    def stop(self, token: int, engine: Engine | None, flush: bool) -> None:
        """Stop watching (processing what is pending) and flush; `engine` is flushed even with no watcher."""
        try:
            self.stop_now(engine, flush)
        finally:
            self.stopped.emit(token)

    def stop_now(self, engine: Engine | None, flush: bool) -> None:
        """The synchronous stop, also used by the GUI thread once this worker's thread has ended."""
        had_watcher = self._watcher is not None
        self._stop(flush=flush)
        if flush and engine is not None:
            try:
                engine.flush()  # vaults loaded but not watched, and an engine that never had a watcher
            except Exception as exc:
                self.failed.emit(f"Saving the index failed: {user_message(exc)}")
        if had_watcher:
            self.watching.emit(())

    def _stop(self, *, flush: bool) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is None:
            return
        try:
            watcher.stop(flush=flush)
        except Exception as exc:  # the index stays dirty on disk and is reconciled at the next start
            self.failed.emit(f"Saving the index failed: {user_message(exc)}")

    def _on_error(self, engine: Engine, name: str, exc: Exception) -> None:
        if name == ALL_VAULTS:
            self.failed.emit(f"Live updates: {user_message(exc)}")
            return
        if engine.config.vault_named(name) is None:
            return  # the vault was just removed; its last events no longer matter
        self.failed.emit(f"Live update of {name} failed: {user_message(exc)}")


def _root_exists(engine: Engine, name: str) -> bool:
    vc = engine.config.vault_named(name)
    return vc is not None and Path(vc.root).is_dir()


class LiveIndexing(QObject):
    """The GUI thread's handle on the `WatchWorker`: requests go out queued, signals come back on this thread.

    Signals:
        updated: A `LiveUpdate`, on the GUI thread.
        failed: A message for the status bar.
        watchingChanged: The vault names now watched.
        caughtUp: A watched vault has been reconciled with its folder; edits to it are live now.
        stopped: The stop request with this token finished.
    """

    updated = Signal(object)
    failed = Signal(str)
    watchingChanged = Signal(object)
    caughtUp = Signal(str)
    stopped = Signal(int)
    _watchRequested = Signal(object, object, float)
    _debounceRequested = Signal(float)
    _stopRequested = Signal(int, object, bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.watched: tuple[str, ...] = ()
        self.caught_up: set[str] = set()  # watched vaults in step with their folders
        self.target: tuple[Engine, tuple[str, ...]] | None = None  # what was last asked for
        self._tokens = 0
        self._shut = False
        self._thread = QThread()
        self._thread.setObjectName("WatchWorker")
        self._worker = WatchWorker()
        self._worker.moveToThread(self._thread)
        queued = Qt.ConnectionType.QueuedConnection
        self._watchRequested.connect(self._worker.watch, queued)
        self._debounceRequested.connect(self._worker.set_debounce, queued)
        self._stopRequested.connect(self._worker.stop, queued)
        self._worker.updated.connect(self._on_updated, queued)  # emitted from watchdog's side
        self._worker.failed.connect(self._on_failed, queued)
        self._worker.watching.connect(self._on_watching, queued)
        self._worker.caughtUp.connect(self._on_caught_up, queued)
        self._worker.stopped.connect(self._on_stopped, queued)
        self._thread.start()

    @property
    def active(self) -> bool:
        """A watcher runs, or was asked to start, on some engine."""
        return self.target is not None

    def watch(self, engine: Engine, names: Sequence[str], debounce: float) -> None:
        """Watch exactly these vaults of this engine; a no-op when that is already so."""
        wanted = tuple(names)
        previous = self.target
        if self._shut or (previous is not None and previous[0] is engine and previous[1] == wanted):
            return
        if not wanted:
            if previous is not None or self.watched:
                self.stop(engine, flush=True)
            return
        if previous is None or previous[0] is not engine:
            self.caught_up.clear()  # a new watcher catches every vault up again
        self.target = (engine, wanted)
        self._watchRequested.emit(engine, list(wanted), debounce)

    def set_debounce(self, seconds: float) -> None:
        if not self._shut:
            self._debounceRequested.emit(seconds)

    def stop(self, engine: Engine | None, *, flush: bool = True) -> int:
        """Stop watching and flush `engine` on the worker thread; `stopped(token)` follows."""
        self._tokens += 1
        self.target = None
        self.caught_up.clear()
        self._stopRequested.emit(self._tokens, engine, flush)
        return self._tokens

    def shutdown(self, engine: Engine | None) -> None:
        """End the worker's thread, then stop (and flush) whatever still runs, synchronously."""
        if self._shut:
            return
        self._shut = True
        self.target = None
        self._thread.quit()
        if not self._thread.wait(60000):  # stuck in a flush: leave it; the dirty flag makes the next start recover
            return
        self._worker.stop_now(engine, flush=True)

    @Slot(object)
    def _on_updated(self, update: LiveUpdate) -> None:
        if not self._shut:
            self.updated.emit(update)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.failed.emit(message)

    @Slot(object)
    def _on_watching(self, names: tuple[str, ...]) -> None:
        self.watched = tuple(names)
        self.caught_up &= set(self.watched)
        self.watchingChanged.emit(self.watched)

    @Slot(str)
    def _on_caught_up(self, name: str) -> None:
        if name in self.watched:
            self.caught_up.add(name)
            self.caughtUp.emit(name)

    @Slot(int)
    def _on_stopped(self, token: int) -> None:
        self.stopped.emit(token)
