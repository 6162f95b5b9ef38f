"""Errors a user can see: tracebacks go to a small rotating log in the data folder, one line to the window.

Workers catch what they expect and say it in words (`user_message`); anything
unexpected is logged here with its traceback, so a bug report can include it,
and shown as one status-bar line naming the log file. Exceptions nobody caught
(a slot, a stray thread) take the same path through `sys.excepthook` and
`threading.excepthook` instead of vanishing into a stderr no one sees.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from types import TracebackType

from core.base.paths import AppPaths

#: The log stays small: a few hundred KB is a lot of tracebacks, and it is never cleaned otherwise.
MAX_BYTES = 256 * 1024
BACKUPS = 2

log = logging.getLogger("cairn.desktop")


class ErrorLog:
    """Installs the log handler and the exception hooks; `close()` puts everything back (tests)."""

    def __init__(self, paths: AppPaths, report: Callable[[str], object]) -> None:
        self.path = paths.log_file
        paths.data_dir.mkdir(parents=True, exist_ok=True)
        self._report = report
        self.handler = RotatingFileHandler(self.path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True)
        self.handler.setLevel(logging.WARNING)
        self.handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"))
        root = logging.getLogger()
        root.addHandler(self.handler)
        if root.level > logging.WARNING or root.level == logging.NOTSET:
            root.setLevel(logging.WARNING)
        self._old_hook = sys.excepthook
        self._old_thread_hook = threading.excepthook
        sys.excepthook = self._excepthook
        threading.excepthook = self._thread_hook

    def close(self) -> None:
        sys.excepthook = self._old_hook
        threading.excepthook = self._old_thread_hook
        logging.getLogger().removeHandler(self.handler)
        self.handler.close()

    def _excepthook(self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        self._uncaught(exc, tb, "the main thread")

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None or isinstance(args.exc_value, SystemExit):
            return
        self._uncaught(args.exc_value, args.exc_traceback, args.thread.name if args.thread else "a thread")

    def _uncaught(self, exc: BaseException, tb: TracebackType | None, where: str) -> None:
        log.error("Uncaught exception in %s", where, exc_info=(type(exc), exc, tb))
        try:
            self._report(f"Unexpected error: {type(exc).__name__}: {exc} — details in {self.path}")
        except Exception:  # reporting must never raise out of an exception hook
            pass
