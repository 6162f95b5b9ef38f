"""Run one blocking call on a thread of its own while this one goes on, and wait for it later.

For calls that mostly wait for the operating system (a child process to be reaped, files to
be removed): they give the GIL up while they wait, so the caller's own work goes on meanwhile.
`join()` waits for the call and raises what it raised, as calling it in place would have, only later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Aside:
    """`call()` started on a daemon thread; `join()` waits for it and re-raises its exception."""

    def __init__(self, call: Callable[[], object], name: str) -> None:
        self._call = call
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had (a process at its limit): the call runs here and now
            self._run()

    def _run(self) -> None:
        try:
            self._call()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever joins, as the call in place would have raised it
            self._error = exc

    def join(self) -> None:
        """Wait for the call to end; raise what it raised (once)."""
        if self._thread.ident is not None:
            self._thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise error
