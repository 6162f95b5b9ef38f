"""`cairn watch` starts on a vault full of odd files (its catch-up sync used to crash on one)
and then follows edits, including a `.cairnignore` saved with a bad line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.core.test_watch_cmd import REPO, LogReader
from tests.hostile_corpus import CRASHERS, make_corpus


def test_watch_starts_on_the_hostile_corpus_and_follows_edits(tmp_path: Path, cairn_home: Path) -> None:
    vault = tmp_path / "odd"
    make_corpus(vault, CRASHERS)
    env = {**os.environ, "CAIRN_HOME": str(cairn_home), "ORT_DISABLE_TELEMETRY": "1", "PYTHONUNBUFFERED": "1"}
    subprocess.run([sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed", "--quiet"], cwd=REPO, env=env, check=True, timeout=300)
    (vault / "late.md").write_text("---\ndate: 2023-02-30\n---\n# Late\n\nwritten before the watcher started\n")  # for the catch-up
    proc = subprocess.Popen(
        [sys.executable, "-m", "core.cli.main", "watch", "--debounce", "0.2", "--flush-after", "60"],
        cwd=str(REPO), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        log = LogReader(proc.stderr)
        log.wait_for("watching odd", timeout=120)
        (vault / ".cairnignore").write_text("[z-a]\nfoo\\\n", encoding="utf-8")
        time.sleep(1.5)  # past the debounce: the bad ignore file is handled on its own first
        (vault / "plain.md").write_text("# Plain\n\nThe lighthouse keeper logs the tide and the gulls.\n")
        line = log.wait_for("plain.md", timeout=60)
        assert "re-indexed" in line, line
        assert proc.poll() is None, "the watcher died"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
