"""Follow edits live: debounced re-index in memory, deferred flush to disk.

Two tiers, after PicoClaw's watcher: a short quiet period (default 1 s) before
changed notes are re-indexed (searchable at once, dirty flag on disk), and a
long one (default 30 s) before everything is flushed and the flag cleared.
Editors save in odd ways (temp file + rename, vim's backup dance, folder
renames); the handler collects note paths from every event and lets the
re-index look at the disk as it is once things are quiet.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from core.engine import Engine, SyncReport
from core.vault.scanner import IGNORE_FILES, IgnoreRules, is_note_name, normalise_rel_path

IGNORED_EVENTS = frozenset({"opened", "closed", "closed_no_write"})


@dataclass(frozen=True, slots=True)
class LiveUpdate:
    vault: str
    paths: tuple[str, ...]  # notes re-indexed or removed; empty for a whole-vault reconcile
    reconciled: bool
    report: SyncReport
    processing_ms: float  # from the start of the re-index to searchable
    latency_ms: float  # from the first event of the batch to searchable


class _VaultEvents(FileSystemEventHandler):
    """Turns raw events for one vault into note paths (or a request to reconcile)."""

    def __init__(self, name: str, root: Path, extra_ignores: tuple[str, ...], sink: Callable[[str, set[str], bool], None]) -> None:
        self.name = name
        self.root = root
        self.extra_ignores = extra_ignores
        self.rules = IgnoreRules(root, extra_ignores)
        self.sink = sink

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in IGNORED_EVENTS:
            return
        rels = [self._rel(raw) for raw in (event.src_path, getattr(event, "dest_path", "") or "") if raw]
        if event.is_directory:
            # A folder created, deleted or moved: every note below it. Its own `modified` and
            # `attrib` (chmod, touch) events change no note, and folders Cairn never indexes
            # (`.git`, `.obsidian`, ignored ones) must not cost a whole-vault reconcile.
            if event.event_type not in ("modified", "attrib") and any(r is not None and not self._ignored(r, True) for r in rels):
                self.sink(self.name, set(), True)
            return
        if any(r in IGNORE_FILES for r in rels):  # the ignore rules changed: notes may come or go
            self.rules = IgnoreRules(self.root, self.extra_ignores)
            self.sink(self.name, set(), True)
            return
        notes = {r for r in rels if r and is_note_name(r) and not self._ignored(r, False)}
        if notes:
            self.sink(self.name, notes, False)

    def _ignored(self, rel: str, is_dir: bool) -> bool:
        return rel != "." and self.rules.ignores(rel, is_dir=is_dir)

    def _rel(self, raw: str | bytes) -> str | None:
        path = Path(raw.decode() if isinstance(raw, bytes) else raw)
        try:
            return normalise_rel_path(path.relative_to(self.root).as_posix())
        except ValueError:
            return None


class VaultWatcher:
    """Watches vaults and keeps the engine's indexes in step with them."""

    def __init__(
        self,
        engine: Engine,
        names: Sequence[str] | None = None,
        *,
        debounce: float = 1.0,
        flush_after: float = 30.0,
        on_update: Callable[[LiveUpdate], None] | None = None,
        on_error: Callable[[str, Exception], None] | None = None,
    ) -> None:
        self.engine = engine
        self.names = list(names or [v.name for v in engine.vaults])
        self.debounce = debounce
        self.flush_after = flush_after
        self.on_update = on_update
        self.on_error = on_error
        self._cond = threading.Condition()
        self._pending: dict[str, set[str]] = {}
        self._reconcile: set[str] = set()
        self._first_event: dict[str, float] = {}
        self._last_event = 0.0
        self._last_change: dict[str, float] = {}
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        observer = Observer()
        for name in self.names:
            vc = self.engine.vault(name)
            root = Path(vc.root).resolve()
            observer.schedule(_VaultEvents(name, root, tuple(vc.ignore), self._collect), str(root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._thread = threading.Thread(target=self._run, name="cairn-watcher", daemon=True)
        self._thread.start()

    def stop(self, *, flush: bool = True) -> None:
        """Stop watching; process what is pending, then flush (the app's close path)."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._process_due(force=True)
        if flush:
            self.engine.flush(self.names)

    @property
    def pending(self) -> bool:
        with self._cond:
            return bool(self._pending or self._reconcile)

    def _collect(self, name: str, notes: set[str], reconcile: bool) -> None:
        now = time.monotonic()
        with self._cond:
            if reconcile:
                self._reconcile.add(name)
            else:
                self._pending.setdefault(name, set()).update(notes)
            self._first_event.setdefault(name, now)
            self._last_event = now
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                wait = self._next_wait()
                self._cond.wait(timeout=wait)
                if self._stopping:
                    return
            self._process_due(force=False)
            self._flush_due()

    def _next_wait(self) -> float:
        now = time.monotonic()
        waits = [0.5]
        if self._pending or self._reconcile:
            waits.append(max(0.0, self._last_event + self.debounce - now))
        for changed in self._last_change.values():
            waits.append(max(0.0, changed + self.flush_after - now))
        return max(0.01, min(waits))

    def _process_due(self, *, force: bool) -> None:
        with self._cond:
            quiet = time.monotonic() - self._last_event >= self.debounce
            if not (force or quiet) or not (self._pending or self._reconcile):
                return
            pending, self._pending = self._pending, {}
            reconcile, self._reconcile = self._reconcile, set()
            first, self._first_event = self._first_event, {}
        for name in sorted(set(pending) | reconcile):
            t0 = time.monotonic()
            try:
                if name in reconcile:
                    report = self.engine.sync([name])[0]
                    paths: tuple[str, ...] = ()
                else:
                    paths = tuple(sorted(pending[name]))
                    report = self.engine.update_notes(name, paths)
            except Exception as exc:  # report and keep watching: one bad save must not stop live indexing
                if self.on_error is not None:
                    self.on_error(name, exc)
                continue
            done = time.monotonic()
            self._last_change[name] = done  # a flush of a vault with nothing new writes nothing
            kw = report.keyword
            if not (kw.added or kw.changed or kw.removed):
                continue  # a chmod, a touch, a save of the same bytes: nothing was re-indexed
            if self.on_update is not None:
                paths = tuple(kw.changed_paths) + tuple(kw.removed_paths) if paths else ()
                update = LiveUpdate(name, paths, name in reconcile, report, (done - t0) * 1000, (done - first.get(name, t0)) * 1000)
                try:
                    self.on_update(update)
                except Exception as exc:  # a failing listener must not end the watcher's thread
                    if self.on_error is not None:
                        self.on_error(name, exc)

    def _flush_due(self) -> None:
        now = time.monotonic()
        for name, changed in list(self._last_change.items()):
            if now - changed >= self.flush_after:
                try:
                    self.engine.flush([name])
                except Exception as exc:
                    if self.on_error is not None:
                        self.on_error(name, exc)
                    continue
                self._last_change.pop(name, None)
