"""`cairn index` starts the parallel build's worker before its imports, and leaves nothing running."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

import core.base.spare_core as sc
import core.index.parallel_build as pb
from core.cli import early_worker
from core.cli.main import main
from tests.fixture_notes import write_vault

REPO = Path(__file__).resolve().parents[2]


def test_the_work_is_estimated_up_to_the_limit_without_hidden_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(early_worker, "work_s", lambda notes, size: notes + size / 1000)
    for i in range(3):
        (tmp_path / f"n{i}.md").write_text("# n\n", encoding="utf-8")  # 4 bytes each
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.MARKDOWN").write_bytes(b"x" * 2000)
    (tmp_path / "sub" / "picture.png").write_bytes(b"\x89PNG" * 1000)
    (tmp_path / ".obsidian").mkdir()
    for i in range(5):
        (tmp_path / ".obsidian" / f"h{i}.md").write_text("# h\n", encoding="utf-8")
    assert early_worker.enough_work([str(tmp_path)], 6.0)  # 4 notes + 2,012 bytes
    assert not early_worker.enough_work([str(tmp_path)], 6.1)  # the hidden folder's notes and the picture do not count
    assert early_worker.enough_work([str(tmp_path), str(tmp_path)], 12.0)  # several folders add up
    assert not early_worker.enough_work(["a-vault-name", str(tmp_path / "missing")], 0.001)


def test_cairn_index_uses_the_early_worker_and_stops_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Where the worker is spawned early (not Linux): `tests/core/index/test_parallel_fork.py` has the forked one."""
    vault = write_vault(tmp_path / "vault", 40)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(early_worker, "forks", lambda: False)
    monkeypatch.setattr(early_worker, "PARALLEL_MIN_WORK_S", 0.001)
    monkeypatch.setattr(pb, "MIN_WORK_S", 0.001)
    monkeypatch.setattr(pb, "MIN_JOB_NOTES", 5)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    started: list[object] = []
    real_start = pb.ParallelBuild.start.__func__  # type: ignore[attr-defined]

    def watching(cls: type[pb.ParallelBuild], *args: object, **kwargs: object) -> pb.ParallelBuild | None:
        pending = sc._PENDING.get(pb.WORKER_TARGET)
        started.append(pending)  # what the CLI started before the build was asked for
        return real_start(cls, *args, **kwargs)

    monkeypatch.setattr(pb.ParallelBuild, "start", classmethod(watching))
    assert main(["index", "--vault", str(vault), "--no-embed", "--quiet"]) == 0
    assert "40 notes" in capsys.readouterr().out
    assert started and started[0] is not None  # the early worker was there for the build
    assert not [p for p in multiprocessing.active_children() if p.name == pb.WORKER_NAME]
    assert pb.WORKER_TARGET not in sc._PENDING


def test_an_early_worker_nobody_takes_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A vault given by a folder that cannot be indexed (here: not a folder at all) fails before any build."""
    vault = write_vault(tmp_path / "vault", 12)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(early_worker, "PARALLEL_MIN_WORK_S", 0.001)
    monkeypatch.setattr(sc, "spare_core", lambda **_: True)
    assert main(["index", "--vault", str(vault), "--vault", "no-such-vault", "--no-embed", "--quiet"]) == 2
    assert not [p for p in multiprocessing.active_children() if p.name == pb.WORKER_NAME]
    assert pb.WORKER_TARGET not in sc._PENDING
    capsys.readouterr()


def test_the_early_worker_module_imports_no_index_code() -> None:
    """Its point is to run before the heavy imports: it must not make them itself."""
    probe = "import sys, core.cli.early_worker; print(sorted(m for m in sys.modules if m.startswith(('whoosh', 'core.index', 'markdown_it'))))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_cairn_index_on_the_command_line_ends_without_teardown_and_leaves_a_whole_index(tmp_path: Path) -> None:
    """`cairn index --no-embed` ends with `os._exit` once all is written: its output still arrives
    through a pipe, and the next run finds every note indexed and its manifest saved."""
    vault = write_vault(tmp_path / "vault", 30)
    env = {**os.environ, "CAIRN_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "core.cli.main", "index", "--vault", str(vault), "--no-embed"]
    first = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "30 notes" in first.stdout and "+30 new" in first.stdout
    second = subprocess.run([*cmd, "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)["vaults"][0]
    assert (report["documents"], report["added"], report["changed"]) == (30, 0, 0)


def test_a_vault_indexed_already_gets_no_early_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A warm `cairn index` reads the changed notes only: no worker is started for it."""
    vault = write_vault(tmp_path / "vault", 20)
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(early_worker, "PARALLEL_MIN_WORK_S", 0.001)
    monkeypatch.setattr(early_worker, "FORK_MIN_WORK_S", 0.001)
    asked: list[str] = []
    monkeypatch.setattr(early_worker, "prestart", lambda target, name, **_: asked.append(target))
    assert not early_worker.indexed_already(str(vault))
    early_worker.start_early([str(vault)])
    assert asked == [early_worker.TARGET]  # new: worth a worker
    assert main(["index", "--vault", str(vault), "--no-embed", "--quiet"]) == 0
    asked.clear()
    assert early_worker.indexed_already(str(vault))
    early_worker.start_early([str(vault)])
    assert asked == []
    capsys.readouterr()
