"""A module's logger, with `logging` imported when something is first logged.

`logging` (with `traceback`, `string` and their imports) is ~3 ms of every `cairn search`,
a new process each time, that logs nothing unless something went wrong. The modules a
search imports name their logger through `logger(__name__)` at the point they log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging


def logger(name: str) -> logging.Logger:
    """`logging.getLogger(name)`, importing `logging` on first use."""
    import logging

    return logging.getLogger(name)
