"""What every `cairn` sub-command shares: exit codes, JSON output, Ctrl-C, paths.

It sits apart from `core.cli.main` (which imports every command) so that commands
never import the module that dispatches to them.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_DEGRADED, EXIT_NOT_BUILT = 0, 1, 2, 3, 4


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def cancel_on_sigint() -> threading.Event:
    """Ctrl-C asks long work to stop between batches; a second Ctrl-C interrupts at once."""
    event = threading.Event()

    def handler(signum: int, frame: object) -> None:
        if event.is_set():
            raise KeyboardInterrupt
        event.set()
        print("\ncairn: stopping after the current batch (Ctrl-C again to abort)", file=sys.stderr)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)
    return event


def resolve_path(text: str) -> Path:
    return Path(text).expanduser()
