"""Fixtures shared by the core tests."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def keep_sigint_handler() -> Iterator[None]:
    """`cairn index` and `cairn watch` install a Ctrl-C handler; give pytest its own back afterwards."""
    previous = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, previous)
