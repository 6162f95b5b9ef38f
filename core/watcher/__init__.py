"""Follow edits live: debounced re-index in memory, deferred flush to disk.

Two tiers, after PicoClaw's watcher: a short quiet period (default 1 s) before
changed notes are re-indexed (searchable at once, dirty flag on disk), and a
long one (default 30 s) before everything is flushed and the flag cleared.
Editors save in odd ways (temp file + rename, vim's backup dance, folder
renames); the handler collects note paths from every event and lets the
re-index look at the disk as it is once things are quiet.

Nothing the user does is lost, whatever else is going on:

- A vault is watched from the moment it is added. Its events queue until its
  keyword index exists and no other writer (a bulk index) holds it; the
  watcher never waits on one vault's writer while others have edits to apply.
- Every start (and every restart) begins with a catch-up reconcile of each
  vault against its manifest, so edits made before or during a first index,
  or while nothing was running, are found.
- A re-index or catch-up that fails (a full disk, a file being replaced) is
  not "caught up": the vault is reconciled again after a pause that doubles
  each time (`retry_delay`), and each failure is reported with the wait.
- A supervisor restarts watchdog's observer if its thread dies, and reports why.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from core.base.errors import IndexBusyError
from core.engine import Engine, SyncReport
from core.watcher.events import VaultEvents, supervised_observer

#: How often a vault whose index is busy (or not built yet) is tried again.
RETRY_S = 0.2

#: The first pause before a failed vault is caught up again; it doubles up to `RETRY_CAP_S`.
RETRY_BASE_S = 2.0
RETRY_CAP_S = 300.0

#: The name errors of the watcher as a whole (not of one vault) are reported under.
ALL_VAULTS = "*"


class Outcome(StrEnum):
    """What one pass over a vault's changes came to."""

    DONE = "done"
    DEFERRED = "deferred"  # its index is busy or not built yet: tried again shortly
    DROPPED = "dropped"  # nothing to do any more (vault removed, or the close path and the next start catches up)
    FAILED = "failed"  # an error: reported, and the vault is caught up again after a back-off


class WatcherFault(RuntimeError):
    """The file watcher itself failed (not one vault's re-index); it was restarted."""


class CatchUpRetry(RuntimeError):
    """A vault's re-index failed; it will be reconciled with its folder again after a pause."""


def retry_delay(failures: int, *, base: float = RETRY_BASE_S, cap: float = RETRY_CAP_S) -> float:
    """The pause before retry number `failures` (1-based): doubling, so a lasting fault costs little."""
    return min(cap, base * 2 ** max(0, failures - 1))


@dataclass(frozen=True, slots=True)
class LiveUpdate:
    vault: str
    paths: tuple[str, ...]  # notes re-indexed or removed (by a reconcile too)
    reconciled: bool
    report: SyncReport
    processing_ms: float  # from the start of the re-index to searchable
    latency_ms: float  # from the first event of the batch to searchable


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
        on_caught_up: Callable[[str], None] | None = None,
        retry_base: float = RETRY_BASE_S,
    ) -> None:
        self.engine = engine
        self.on_caught_up = on_caught_up
        self.names = list(names or [v.name for v in engine.vaults])
        self.debounce = debounce
        self.flush_after = flush_after
        self.on_update = on_update
        self.on_error = on_error
        self.restarts = 0  # observer restarts by the supervisor
        self.retry_base = retry_base
        self._failures: dict[str, int] = {}  # failed passes in a row, per vault
        self._retry_at: dict[str, float] = {}  # a failed vault is not tried before this time
        self._cond = threading.Condition()
        self._pending: dict[str, set[str]] = {}
        self._reconcile: set[str] = set()
        self._first_event: dict[str, float] = {}
        self._last_event = 0.0
        self._deferred = False
        self._last_change: dict[str, float] = {}
        self._stopping = False
        self._observer: Any = None
        self._watches: dict[str, Any] = {}
        self._caught_up: set[str] = set()  # vaults whose start-up reconcile has run
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start watching; a catch-up reconcile of every vault is queued first."""
        self._start_observer()
        with self._cond:
            self._reconcile.update(self.names)
            self._first_event.update({n: time.monotonic() for n in self.names})
        self._thread = threading.Thread(target=self._run, name="cairn-watcher", daemon=True)
        self._thread.start()

    def set_names(self, names: Sequence[str]) -> None:
        """Watch exactly these vaults from now on; a newly watched one is caught up first."""
        wanted = list(dict.fromkeys(names))
        with self._cond:
            added = [n for n in wanted if n not in self.names]
            gone = [n for n in self.names if n not in wanted]
            self.names = wanted
            for name in gone:
                self._pending.pop(name, None)
                self._reconcile.discard(name)
                self._caught_up.discard(name)
            observer = self._observer
        # Not under `_cond`: watchdog holds its own lock while a handler calls `_collect`.
        if observer is not None:
            for name in gone:
                watch = self._watches.pop(name, None)
                if watch is not None:
                    observer.unschedule(watch)
            for name in added:
                self._schedule(observer, name)
        with self._cond:
            for name in added:
                self._reconcile.add(name)
                self._first_event.setdefault(name, time.monotonic())
            self._cond.notify_all()

    def stop(self, *, flush: bool = True) -> None:
        """Stop watching; process what is pending, then flush (the app's close path)."""
        with self._cond:
            self._stopping = True
            observer, self._observer = self._observer, None
            self._cond.notify_all()
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._process_due(force=True, wait=True)
        if flush:
            self.engine.flush([n for n in self.names if self.engine.config.vault_named(n) is not None])

    def caught_up(self, name: str) -> bool:
        """Whether this vault's catch-up reconcile has run (it is live and in step since)."""
        with self._cond:
            return name in self._caught_up

    def wait_caught_up(self, timeout: float) -> bool:
        """Wait until every watched vault has been caught up; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not set(self.names) <= self._caught_up:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    @property
    def pending(self) -> bool:
        with self._cond:
            return bool(self._pending or self._reconcile)

    def _start_observer(self) -> None:
        observer = supervised_observer()
        observer.daemon = True
        self._watches = {}
        for name in list(self.names):
            self._schedule(observer, name)
        observer.start()
        self._observer = observer

    def _schedule(self, observer: Any, name: str) -> None:
        vc = self.engine.config.vault_named(name)
        if vc is None:
            return
        root = Path(vc.root).resolve()
        handler = VaultEvents(name, root, tuple(vc.ignore), self._collect, self._report)
        self._watches[name] = observer.schedule(handler, str(root), recursive=True)

    def _report(self, name: str, exc: Exception) -> None:
        if self.on_error is not None:
            try:
                self.on_error(name, exc)
            except Exception:  # a failing listener must not end the watcher's thread
                pass

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
            try:
                self._supervise()
                self._process_due(force=False)
                self._flush_due()
            except Exception as exc:  # never let this thread die: live updates would stop silently
                self._report(ALL_VAULTS, exc)

    def _supervise(self) -> None:
        """Restart watchdog's observer if its thread ended without being asked to."""
        observer = self._observer
        if observer is None or observer.is_alive() or self._stopping:
            return
        fault = getattr(observer, "fault", None)
        self.restarts += 1
        self._report(ALL_VAULTS, WatcherFault(f"the file watcher stopped ({fault or 'no reason given'}); restarted it and caught up"))
        self._start_observer()
        with self._cond:
            self._reconcile.update(self.names)  # events during the gap were lost: reconcile instead

    def _next_wait(self) -> float:
        now = time.monotonic()
        waits = [0.5]
        held = self._held(now)
        if self._pending.keys() - held or self._reconcile - held:
            waits.append(max(0.0, self._last_event + self.debounce - now))
            if self._deferred:
                waits.append(RETRY_S)
        waits.extend(max(0.0, self._retry_at[name] - now) for name in held)
        for changed in self._last_change.values():
            waits.append(max(0.0, changed + self.flush_after - now))
        return max(0.01, min(waits))

    def _held(self, now: float) -> set[str]:
        """Vaults waiting out a back-off after a failure (their events wait with them)."""
        return {name for name, at in self._retry_at.items() if at > now}

    def _process_due(self, *, force: bool, wait: bool = False) -> None:
        batch = self._take_due(force=force)
        if batch is None:
            return
        pending, reconcile, first = batch
        for name in sorted(set(pending) | reconcile):
            outcome = self._process_vault(name, pending.get(name, set()), name in reconcile, first.get(name), wait=wait)
            if name in reconcile and outcome in (Outcome.DONE, Outcome.DROPPED):
                self._mark_caught_up(name, notify=not wait)
            elif outcome is Outcome.DEFERRED and not wait:
                with self._cond:  # try again shortly, merged with whatever arrived meanwhile
                    self._requeue(name, pending.get(name, set()), name in reconcile, first.get(name))
                    self._deferred = True

    def _take_due(self, *, force: bool) -> tuple[dict[str, set[str]], set[str], dict[str, float]] | None:
        """What is due now; a vault waiting out a back-off keeps its events queued (unless closing)."""
        with self._cond:
            now = time.monotonic()
            held = set() if force else self._held(now)
            quiet = now - self._last_event >= self.debounce
            if not (force or quiet) or not (self._pending.keys() - held or self._reconcile - held):
                return None
            pending = {n: notes for n, notes in self._pending.items() if n not in held}
            reconcile = self._reconcile - held
            first = {n: t for n, t in self._first_event.items() if n not in held}
            self._pending = {n: notes for n, notes in self._pending.items() if n in held}
            self._reconcile &= held
            self._first_event = {n: t for n, t in self._first_event.items() if n in held}
            self._deferred = False
            return pending, reconcile, first

    def _requeue(self, name: str, notes: set[str], reconcile: bool, first: float | None) -> None:
        """Put a vault's batch back (under `_cond`), merged with whatever arrived meanwhile."""
        if reconcile:
            self._reconcile.add(name)
        if notes:
            self._pending.setdefault(name, set()).update(notes)
        if first is not None:
            self._first_event[name] = min(first, self._first_event.get(name, first))

    def _mark_caught_up(self, name: str, *, notify: bool) -> None:
        with self._cond:
            first_time = name not in self._caught_up
            self._caught_up.add(name)
            self._failures.pop(name, None)
            self._retry_at.pop(name, None)
            self._cond.notify_all()
        if first_time and notify and self.on_caught_up is not None:
            try:
                self.on_caught_up(name)
            except Exception as exc:
                self._report(name, exc)

    def _failed(self, name: str, exc: Exception, *, retry: bool) -> None:
        """Report a vault's failed pass; unless closing, catch it up again after a growing pause."""
        if not retry:
            self._report(name, exc)
            return
        with self._cond:
            failures = self._failures[name] = self._failures.get(name, 0) + 1
            delay = retry_delay(failures, base=self.retry_base)
            self._retry_at[name] = time.monotonic() + delay
            self._reconcile.add(name)  # a reconcile finds whatever this pass did not apply
            self._first_event.setdefault(name, time.monotonic())
            self._cond.notify_all()
        news = CatchUpRetry(f"could not bring the index in step with the folder ({exc}); retrying in {delay:.0f} s")
        news.__cause__ = exc
        self._report(name, news)

    def _process_vault(self, name: str, notes: set[str], reconcile: bool, first: float | None, *, wait: bool) -> Outcome:
        """Re-index one vault's changes; DEFERRED when its index is busy or not built yet."""
        if self.engine.config.vault_named(name) is None or name not in self.names:
            return Outcome.DROPPED  # removed meanwhile: its last events no longer matter
        lock = self.engine.write_lock(name)
        if not lock.acquire(blocking=wait):
            return Outcome.DEFERRED  # a bulk index holds it; never block the other vaults behind it
        t0 = time.monotonic()
        try:
            if not self.engine.keyword_built(name):
                return Outcome.DEFERRED if not wait else Outcome.DROPPED  # the next start catches up
            if reconcile:
                report = self.engine.catch_up(name)
                paths: tuple[str, ...] = ()
            elif notes:
                paths = tuple(sorted(notes))
                report = self.engine.update_notes(name, paths)
            else:
                return Outcome.DONE
        except IndexBusyError:
            return Outcome.DEFERRED if not wait else Outcome.DROPPED  # another process writes it; the next start catches up
        except Exception as exc:  # report and keep watching: one bad save must not stop live indexing
            self._failed(name, exc, retry=not wait)
            return Outcome.FAILED
        finally:
            lock.release()
        done = time.monotonic()
        self._last_change[name] = done  # a flush of a vault with nothing new writes nothing
        kw = report.keyword
        if not (kw.added or kw.changed or kw.removed):
            return Outcome.DONE  # a chmod, a touch, a save of the same bytes: nothing was re-indexed
        if self.on_update is not None:
            paths = tuple(kw.changed_paths) + tuple(kw.removed_paths)
            update = LiveUpdate(name, paths, reconcile, report, (done - t0) * 1000, (done - (first or t0)) * 1000)
            try:
                self.on_update(update)
            except Exception as exc:  # a failing listener must not end the watcher's thread
                self._report(name, exc)
        return Outcome.DONE

    def _flush_due(self) -> None:
        now = time.monotonic()
        for name, changed in list(self._last_change.items()):
            if now - changed < self.flush_after:
                continue
            lock = self.engine.write_lock(name)
            if not lock.acquire(blocking=False):
                continue  # a bulk index holds it and saves everything itself
            try:
                if self.engine.config.vault_named(name) is not None:
                    self.engine.flush([name])
            except Exception as exc:
                self._report(name, exc)
                continue
            finally:
                lock.release()
            self._last_change.pop(name, None)
