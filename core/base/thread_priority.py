"""Background threads that give way to the UI thread for a core (Linux: per-thread niceness)."""

from __future__ import annotations

import os
import sys
import threading

_lowered = threading.local()


def lower_this_thread(nice: int) -> bool:
    """Make this thread `nice` nicer than the main thread, once (later calls on it do nothing); False where unsupported.

    On Linux a thread is a task with its own niceness, so a busy server thread can yield the
    cores to the app's UI thread when the machine is loaded. Elsewhere `setpriority` would
    change the whole process (the UI thread too), so nothing is done. Niceness only goes up
    for an unprivileged process: a pooled thread stays lowered, which is meant.
    """
    if nice <= 0 or not sys.platform.startswith("linux") or getattr(_lowered, "done", False):
        return False
    _lowered.done = True
    try:
        # `nice` above the main thread's (the UI thread's), not above this thread's own: a thread
        # inherits its creator's niceness, so a worker started by a lowered thread is already lowered.
        tid = threading.get_native_id()
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + nice)
        if os.getpriority(os.PRIO_PROCESS, tid) < target:
            os.setpriority(os.PRIO_PROCESS, tid, target)
    except OSError:
        return False
    return True
