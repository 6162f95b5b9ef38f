"""A catch-up that fails is not "caught up": it is retried with back-off, and the status says so.

Real watchdog on a temporary vault and a real engine whose catch-up fails the first times it runs
(the disk full, a damaged file being replaced): the vault must not show live until a catch-up has
really run, and the edits made while nothing watched must end up indexed without a restart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.base.models import SearchFilters
from core.base.paths import AppPaths
from core.engine import Engine
from core.search.search import SearchRequest
from core.watcher import CatchUpRetry, Outcome, VaultWatcher
from tests.helpers import BagOfWordsEmbedder

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

VAULT = "notes"


@pytest.fixture
def engine(tmp_path: Path, cairn_home: Path) -> Iterator[Engine]:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "alpha.md").write_text("# Alpha\n\nThe alpha note talks about marmalade.\n")
    eng = Engine(AppPaths(cairn_home), embedder_factory=lambda vc: BagOfWordsEmbedder())
    eng.add_vault(root, name=VAULT)
    eng.sync()
    (root / "offline.md").write_text("# Offline\n\nWritten while nothing watched: quokkas.\n")
    yield eng
    eng.close()


def found(engine: Engine, word: str) -> set[str]:
    resp = engine.search(SearchRequest(word, mode="keyword", k=10, filters=SearchFilters(allow_restricted=True)))
    return {h.chunk.rel_path for h in resp.hits}


class Failing:
    """`engine.catch_up` that raises the first `times` calls, then does the real work."""

    def __init__(self, engine: Engine, times: int) -> None:
        self.real = engine.catch_up
        self.left = times
        self.calls: list[float] = []

    def __call__(self, name: str):  # type: ignore[no-untyped-def]
        self.calls.append(time.monotonic())
        if self.left > 0:
            self.left -= 1
            raise OSError(28, "No space left on device")
        return self.real(name)


def test_a_failed_catch_up_is_not_caught_up_and_is_retried_with_back_off(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = Failing(engine, times=2)
    monkeypatch.setattr(engine, "catch_up", failing)
    errors: list[tuple[str, Exception]] = []
    lock = threading.Lock()

    def on_error(name: str, exc: Exception) -> None:
        with lock:
            errors.append((name, exc))

    watcher = VaultWatcher(engine, [VAULT], debounce=0.05, flush_after=60, on_error=on_error, retry_base=0.3)
    watcher.start()
    try:
        deadline = time.monotonic() + 1.0
        while len(failing.calls) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        assert not watcher.caught_up(VAULT)  # before the fix a failed catch-up counted as caught up
        assert watcher.wait_caught_up(10.0)
        assert found(engine, "quokkas") == {"offline.md"}  # the retry indexed what was edited offline
    finally:
        watcher.stop()
    assert len(failing.calls) == 3
    gaps = [b - a for a, b in zip(failing.calls, failing.calls[1:])]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6  # back-off doubles
    retries = [exc for name, exc in errors if name == VAULT]
    assert len(retries) == 2 and all(isinstance(e, CatchUpRetry) for e in retries)
    assert "retrying in" in str(retries[0]) and "No space left" in str(retries[0])


def test_back_off_is_capped_and_the_outcome_is_an_enum() -> None:
    from core.watcher import retry_delay

    assert [retry_delay(n, base=1.0, cap=8.0) for n in (1, 2, 3, 4, 5, 9)] == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert {o.value for o in Outcome} == {"done", "deferred", "dropped", "failed"}
