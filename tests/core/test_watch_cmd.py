"""`cairn watch` as a user runs it: a process that follows edits, logs them, and flushes on SIGTERM."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.base.paths import AppPaths
from core.cli.main import main
from core.engine import Engine

REPO = Path(__file__).resolve().parents[2]


class LogReader:
    """Reads a process's stderr on a thread, so waiting for a line never blocks the test."""

    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:  # type: ignore[no-untyped-def]
        for raw in stream:
            self._queue.put(raw.decode("utf-8", "replace").rstrip("\n"))

    def wait_for(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, min(0.1, deadline - time.monotonic())))
            except queue.Empty:
                if time.monotonic() > deadline:
                    log = "\n".join(self.lines)
                    raise AssertionError(f"no log line with {text!r} within {timeout:.0f} s; log so far:\n{log}") from None
                continue
            self.lines.append(line)
            if text in line:
                return line


def test_watch_reindexes_an_edit_and_flushes_on_sigterm(tmp_path: Path, cairn_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "garden"
    vault.mkdir()
    (vault / "Plants.md").write_text("# Plants\n\nTomatoes need sun.\n")
    (vault / "Tools.md").write_text("# Tools\n\nA spade and a rake.\n")
    assert main(["index", "--vault", str(vault), "--no-embed", "--quiet"]) == 0
    capsys.readouterr()
    (vault / "Tools.md").write_text("# Tools\n\nA spade, a rake and a hoe.\n")  # while nothing watched

    env = {**os.environ, "CAIRN_HOME": str(cairn_home), "ORT_DISABLE_TELEMETRY": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli.main", "watch", "--debounce", "0.2", "--flush-after", "60"],
        cwd=str(REPO),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        log = LogReader(proc.stderr)
        log.wait_for("watching garden", timeout=60)  # after the catch-up sync, which loads the model
        (vault / "Plants.md").write_text("# Plants\n\nTomatoes need sun; basil likes mulch.\n")
        line = log.wait_for("re-indexed", timeout=30)
        assert "Plants.md" in line
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        log.wait_for("flushed and stopped", timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    engine = Engine(AppPaths(cairn_home), embedder_factory=None)
    assert not engine.index_for("garden").dirty_path.exists()
    engine.close()
    assert main(["search", "mulch", "--mode", "keyword"]) == 0
    out = capsys.readouterr().out
    assert "[garden/Plants.md#0]" in out
    assert main(["search", "hoe", "--mode", "keyword"]) == 0
    assert "[garden/Tools.md#0]" in capsys.readouterr().out  # caught up at start
