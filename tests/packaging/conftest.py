"""The `packaging` marker: tests of the built one-folder app in dist/Cairn (build it with `make package`)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "packaging: tests of the frozen app in dist/Cairn; skipped when it is not built")
