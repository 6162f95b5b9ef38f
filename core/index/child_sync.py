"""Build a vault's first keyword index in a child process.

Whoosh sorts its posting pools in single C calls that hold the GIL for up to a
few hundred milliseconds; in the app's process that freezes the window while
a large vault is indexed for the first time. A child process has its own GIL.
Only bulk builds go there (spawning costs ~1 s): later syncs and live edits
touch a few notes and stay in-process. If the child cannot run, the caller
indexes in-process as before.
"""

from __future__ import annotations

import atexit
import multiprocessing
import queue
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from core.base.config import EngineConfig
from core.index.indexer import SyncStats

Progress = Callable[[int, int, str], None]


class ChildSyncError(RuntimeError):
    """The child could not index (it died or failed); the message says why."""


def _child(data_dir: str, config: EngineConfig, name: str, out: Any, cancel: Any) -> None:
    from core.base.paths import AppPaths
    from core.index.indexer import VaultIndex

    parent = multiprocessing.parent_process()

    class _Cancel:
        def is_set(self) -> bool:
            # Not a daemon (it starts a segment-building worker of its own, which a daemon may not):
            # it stops by itself, after the current note, when the app that started it is gone.
            return bool(cancel.is_set()) or (parent is not None and not parent.is_alive())

    try:
        vault = config.vault_named(name)
        if vault is None:
            raise ValueError(f"no vault named {name!r} in the configuration given to the child")
        index = VaultIndex(vault, AppPaths(Path(data_dir)), config)
        stats = index.sync(progress=lambda d, t, p: out.put(("progress", d, t, p)), cancel=_Cancel())  # type: ignore[arg-type]
        index.close()
        out.put(("done", asdict(stats)))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent as text
        out.put(("error", f"{type(exc).__name__}: {exc}"))


def sync_keyword_in_child(
    data_dir: Path,
    config: EngineConfig,
    name: str,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    poll_seconds: float = 0.1,
) -> SyncStats:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    child_cancel = ctx.Event()
    proc = ctx.Process(target=_child, args=(str(data_dir), config, name, out, child_cancel), daemon=False, name=f"cairn-index-{name}")
    try:
        proc.start()
    except Exception as exc:  # e.g. a frozen build without multiprocessing support
        raise ChildSyncError(f"cannot start an indexing process: {exc}") from exc
    # Python joins a non-daemon child at exit: an app quitting mid-index asks it to stop first
    # (it saves what it did after the current note) rather than wait for the whole vault.
    atexit.register(child_cancel.set)
    try:
        while True:
            if cancel is not None and cancel.is_set():
                child_cancel.set()  # the child stops after the current note and saves what it did
            try:
                message = out.get(timeout=poll_seconds)
            except queue.Empty:
                if not proc.is_alive():
                    raise ChildSyncError(f"the indexing process exited with code {proc.exitcode}") from None
                continue
            kind = message[0]
            if kind == "progress" and progress is not None:
                progress(message[1], message[2], message[3])
            elif kind == "done":
                return _stats(message[1])
            elif kind == "error":
                raise ChildSyncError(message[1])
    finally:
        atexit.unregister(child_cancel.set)
        proc.join(timeout=30)
        if proc.is_alive():
            proc.kill()


def _stats(data: dict[str, Any]) -> SyncStats:
    data = dict(data)
    data["changed_paths"] = tuple(data.get("changed_paths", ()))
    data["removed_paths"] = tuple(data.get("removed_paths", ()))
    return SyncStats(**data)
