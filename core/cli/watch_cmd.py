"""`cairn watch`: keep the indexes live from a terminal, logging every re-index."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time

from core.base.errors import UsageError
from core.cli.commands import open_engine
from core.cli.common import EXIT_OK
from core.cli.progress import ProgressLine
from core.watcher import LiveUpdate, VaultWatcher


def _log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def cmd_watch(args: argparse.Namespace) -> int:
    if args.debounce < 0 or args.flush_after < args.debounce:
        raise UsageError("--debounce must be >= 0 and --flush-after >= --debounce")
    engine = open_engine()
    names = args.vault or [v.name for v in engine.vaults]
    if not names:
        raise UsageError("No vaults yet. Add one: cairn index --vault PATH/TO/NOTES")
    for name in names:
        engine.vault(name)
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    def on_update(u: LiveUpdate) -> None:
        if u.reconciled:
            what = f"caught up: re-indexed {', '.join(u.paths)}" if u.paths else "reconciled the whole vault"
        else:
            what = f"re-indexed {', '.join(u.paths)}"
        emb = u.report.embedding
        extra = f", {emb.embedded} chunk(s) embedded" if emb else ""
        _log(f"{u.vault}: {what} in {u.processing_ms:.0f} ms{extra}")

    def on_error(name: str, exc: Exception) -> None:
        _log(f"{name}: re-index failed: {exc}")

    watcher = VaultWatcher(engine, names, debounce=args.debounce, flush_after=args.flush_after, on_update=on_update, on_error=on_error)
    try:
        # Watch first, then catch up: a note saved while the catch-up runs (minutes, when a
        # large vault is embedded) is re-indexed after it instead of being missed; the watcher
        # reconciles each vault itself once this sync lets go of it.
        watcher.start()
        reports = engine.sync(names, progress=ProgressLine("catching up"), cancel=stop)
    except FileNotFoundError as exc:  # a registered vault whose folder is gone: say so, no stack trace
        watcher.stop(flush=False)
        raise UsageError(f"{exc}; nothing to watch") from exc
    for report in reports:
        kw = report.keyword
        _log(f"{kw.vault}: {kw.documents} notes ready (+{kw.added} ~{kw.changed} -{kw.removed})")
    _log(f"watching {', '.join(names)} (Ctrl-C to stop)")
    while not stop.wait(0.5):
        pass
    t0 = time.perf_counter()
    watcher.stop(flush=True)
    _log(f"flushed and stopped in {(time.perf_counter() - t0) * 1000:.0f} ms")
    return EXIT_OK
