"""Test-wide setup: headless Qt, a private CAIRN_HOME, an in-memory keyring."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before anything imports Qt
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import keyring  # noqa: E402
import keyring.backend  # noqa: E402
import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE_VAULT = REPO / "resources" / "sample-vault"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that lives in memory: secure enough for tests, never touches the OS."""

    priority = 10  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def cairn_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cairn-home"
    monkeypatch.setenv("CAIRN_HOME", str(home))
    return home


@pytest.fixture
def sample_vault() -> Path:
    return SAMPLE_VAULT
