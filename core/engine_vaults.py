"""The engine's vault management: the vault list in config.json, each vault's open index, its writer lock.

A part `Engine` holds (`engine.registry`), beside the work done on vaults (sync,
live updates, embedding, search, status). What is here is the bookkeeping all of
that stands on: adding and forgetting vaults against the file (another process
may have changed it), opening a vault's index once and reopening it when another
process rewrote it, and one writer lock per vault. When it lets go of a vault's
index it tells its owner (`on_forget`), which drops what it built on top.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from core.base.config import (
    EngineConfig,
    VaultConfig,
    add_vault,
    merge_settings,
    modify_config,
    placement_problem,
    read_config,
    remove_vault,
)
from core.base.errors import IndexBusyError, IndexNotBuiltError, UsageError
from core.base.paths import AppPaths
from core.index.indexer import Recovery, VaultIndex
from core.index.vault_lock import BUSY_STATE


class VaultRegistry:
    """Config, open indexes and writer locks, under the lock its owner passes in (the engine's)."""

    def __init__(
        self, paths: AppPaths, config: EngineConfig | None, lock: threading.RLock, on_forget: Callable[[str], None]
    ) -> None:
        self.paths = paths
        self.config_problem: str | None = None  # a damaged config.json set aside at start
        if config is None:
            loaded = read_config(paths)
            config, self.config_problem = loaded.config, loaded.problem
        self.config = config
        self._lock = lock
        self._on_forget = on_forget
        self._indexes: dict[str, VaultIndex] = {}
        self._write_locks: dict[str, threading.RLock] = {}

    def open_index(self, name: str) -> VaultIndex | None:
        """The vault's index if it is open here; never opens (or creates) one."""
        return self._indexes.get(name)

    def open_names(self) -> list[str]:
        return list(self._indexes)

    def forget_index(self, name: str) -> VaultIndex | None:
        """Let go of the vault's open index (another process rewrote it); the caller closes it."""
        with self._lock:
            self._on_forget(name)
            return self._indexes.pop(name, None)

    def close(self) -> None:
        with self._lock:
            indexes = list(self._indexes.values())
            self._indexes.clear()
        for vi in indexes:
            vi.close()

    def _drop(self, name: str) -> None:
        vi = self._indexes.pop(name, None)
        if vi is not None:
            vi.close()
        self._on_forget(name)

    @property
    def vaults(self) -> tuple[VaultConfig, ...]:
        return self.config.vaults

    def add_vault(self, root: Path, name: str | None = None) -> VaultConfig:
        if not Path(root).is_dir():
            raise UsageError(f"{root} is not a folder")
        added: list[VaultConfig] = []

        def change(disk: EngineConfig) -> EngineConfig:
            # Judged against the file, not this engine's copy: another process may have added vaults.
            problem = placement_problem(disk, Path(root), self.paths.data_dir)
            if problem is not None:
                raise UsageError(problem)
            new, vc = add_vault(disk, Path(root), name)
            added.append(vc)
            return new

        with self._lock:
            self.config = modify_config(self.paths, change)
            return added[0]

    def remove_vault(self, name: str) -> None:
        """Forget a vault; waits for its writer (a sync or a live update) so none is cut off mid-write.

        The lock lives here, not in a caller, so the CLI and the MCP server get
        the same protection as the app.
        """
        with self.write_lock(name), self._lock:
            self._drop(name)
            self.config = modify_config(self.paths, lambda disk: remove_vault(disk, name))

    def update_config(self, config: EngineConfig) -> None:
        """Save `config`'s settings; vaults other processes registered meanwhile are kept."""
        with self._lock:
            before = self.config
            self.config = modify_config(self.paths, lambda disk: merge_settings(disk, before, config))
            for vi in self._indexes.values():
                vi.kinds_off = self.config.kinds_off  # the next sync and the watcher skip those kinds

    def reload_config(self) -> bool:
        """Pick up changes other processes made to config.json; True when the vault list changed.

        Only the vault list is taken over live: settings changes need a fresh engine
        (indexes are built from them), which the caller decides about.
        """
        loaded = read_config(self.paths)
        if loaded.problem is not None:
            self.config_problem = loaded.problem
        with self._lock:
            if loaded.config.vaults == self.config.vaults:
                return False
            gone = {v.name for v in self.config.vaults} - {v.name for v in loaded.config.vaults}
            for name in gone:
                self._drop(name)
            self.config = replace(self.config, vaults=loaded.config.vaults)
            return True

    def vault(self, name: str) -> VaultConfig:
        vc = self.config.vault_named(name)
        if vc is None:
            known = ", ".join(v.name for v in self.config.vaults) or "none"
            raise UsageError(f"No vault named {name!r} (known: {known}). Add it with `cairn index --vault PATH`.")
        return vc

    def index_for(self, name: str) -> VaultIndex:
        """The vault's open index, reopened when another process rewrote it since.

        Raises:
            IndexBusyError: Another Cairn process is building it; nothing here was created or reset.
        """
        with self._lock:
            vi = self._indexes.get(name)
            if vi is not None and vi.changed_elsewhere:
                vi = self._reopened(name, vi)
            if vi is None:
                vi = VaultIndex(self.vault(name), self.paths, self.config)
                self._indexes[name] = vi
            return vi

    def _reopened(self, name: str, vi: VaultIndex) -> VaultIndex | None:
        """Drop an index another process (`cairn index`, the app) rewrote, so this one sees its notes.

        Only when no thread here writes it (that writer saves its own view); the old
        object is not closed, as a search on another thread may still read it.
        """
        lock = self.write_lock(name)
        if not lock.acquire(blocking=False):
            return vi
        try:
            if vi.is_dirty or not vi.xlock.free():
                return vi  # unsaved live edits here, or the other writer is not done yet
            self._indexes.pop(name, None)
            self._on_forget(name)
            return None
        finally:
            lock.release()

    def is_built(self, name: str) -> bool:
        try:
            return self.index_for(name).is_built
        except IndexBusyError:
            return False

    def keyword_built(self, name: str) -> bool:
        """Whether the vault's keyword index exists, without opening (or creating) it.

        The watcher asks this of a vault that may be in its first build, perhaps by
        another process: opening an index that is not there yet would start an empty one.
        """
        with self._lock:
            vi = self._indexes.get(name)
        if vi is not None:
            return vi.is_built
        return (self.paths.vault_dir(name) / "info.json").exists()

    def write_lock(self, name: str) -> threading.RLock:
        """One writer per vault: a full sync, a live update and a flush never interleave."""
        with self._lock:
            return self._write_locks.setdefault(name, threading.RLock())

    def busy(self, name: str) -> bool:
        """Not built here, and another process holds its lock: a first index being built elsewhere."""
        try:
            vi = self.index_for(name)
        except IndexBusyError:
            return True
        return not vi.is_built and not vi.xlock.free()

    def nothing_built(self) -> IndexNotBuiltError:
        """Why there is nothing to search, in words the user can act on."""
        elsewhere = [v.name for v in self.config.vaults if self.busy(v.name)]
        if elsewhere:
            return IndexNotBuiltError(f"{', '.join(elsewhere)}: {BUSY_STATE} — search again when it has finished")
        stale = [v.name for v in self.config.vaults if self.index_for(v.name).recovery == Recovery.OUTDATED]
        if stale:
            return IndexNotBuiltError(
                f"The index of {', '.join(stale)} was built by an older version of Cairn — run `cairn index` to rebuild it"
            )
        return IndexNotBuiltError("No index yet — run `cairn index --vault PATH` (or press Index in the app)")
