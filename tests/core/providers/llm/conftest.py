"""Fixtures for the chat-provider tests: a live scripted server and providers aimed at it."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.core.providers.llm.fake_server import Providers, ScriptedServer, serve


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted chat server on an ephemeral port, shut down after the test."""
    yield from serve()


@pytest.fixture
def providers(server: ScriptedServer) -> Iterator[Providers]:
    harness = Providers(server)
    yield harness
    harness.close()


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
