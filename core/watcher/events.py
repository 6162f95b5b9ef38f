"""Raw file-system events of one vault, turned into the note paths they touch.

Kept apart from the watcher's scheduling (core/watcher/__init__.py) because this is the part that
knows about editors' save dances and ignore rules, and the part watchdog calls on its own thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from core.vault.attachments import FOLDER_SETTINGS
from core.vault.scanner import IGNORE_FILES, IgnoreRules, is_indexable_name, normalise_rel_path

IGNORED_EVENTS = frozenset({"opened", "closed", "closed_no_write"})


class VaultEvents(FileSystemEventHandler):
    """Turns raw events for one vault into note paths (or a request to reconcile)."""

    def __init__(
        self,
        name: str,
        root: Path,
        extra_ignores: tuple[str, ...],
        sink: Callable[[str, set[str], bool], None],
        on_error: Callable[[str, Exception], None],
    ) -> None:
        self.name = name
        self.root = root
        self.extra_ignores = extra_ignores
        self.sink = sink
        self.on_error = on_error
        try:
            self.rules = IgnoreRules(root, extra_ignores)
        except Exception as exc:  # a bad ignore line: watch everything; the reconcile reports it too
            on_error(name, exc)
            self.rules = IgnoreRules(root, ())

    def dispatch(self, event: FileSystemEvent) -> None:
        # An exception here would end watchdog's dispatch thread and with it every vault's
        # live updates: report it and reconcile the vault instead, so nothing is missed.
        try:
            super().dispatch(event)
        except Exception as exc:
            self.on_error(self.name, exc)
            self.sink(self.name, set(), True)

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
            self.sink(self.name, set(), True)
            self.rules = IgnoreRules(self.root, self.extra_ignores)  # may raise: `dispatch` reports it
            return
        if any(r and r.rpartition("/")[2] == FOLDER_SETTINGS and not self._ignored(r, False) for r in rels):
            self.sink(self.name, set(), True)  # a folder's confidentiality changed: its attachments follow
            return
        notes = {r for r in rels if r and is_indexable_name(r) and not self._ignored(r, False)}
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


def supervised_observer() -> Any:
    """An observer that remembers the exception that ended its thread (watchdog only prints it)."""

    class SupervisedObserver(Observer):  # type: ignore[misc,valid-type]
        fault: BaseException | None = None

        def run(self) -> None:
            try:
                super().run()
            except BaseException as exc:
                self.fault = exc

    return SupervisedObserver()
