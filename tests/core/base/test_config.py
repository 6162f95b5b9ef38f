"""config.json has many writers: read-modify-write under a file lock, nothing registered is dropped."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from core.base.config import (
    EngineConfig,
    VaultConfig,
    load_config,
    merge_settings,
    modify_config,
    read_config,
    save_config,
)
from core.base.paths import AppPaths
from core.engine import Engine

REPO = Path(__file__).resolve().parents[3]

_ADDER = """
import sys
from dataclasses import replace
from pathlib import Path

from core.base.paths import AppPaths
from core.engine import Engine

data, base, who, n = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
engine = Engine(AppPaths(Path(data)), embedder_factory=None)
for i in range(n):
    folder = base / f"{who}-{i}"
    folder.mkdir()
    engine.add_vault(folder)
    if i % 3 == 0:  # a settings save from this process's (stale) copy, as the app's dialog does
        engine.update_config(replace(engine.config, top_n=engine.config.top_n + 1))
print("done")
"""


def test_two_processes_adding_vaults_at_once_keep_every_vault(tmp_path: Path) -> None:
    data = tmp_path / "data"
    n = 12
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ADDER, str(data), str(tmp_path), who, str(n)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("a", "b")
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "done"
    config = load_config(AppPaths(data))
    names = sorted(v.name for v in config.vaults)
    assert names == sorted([f"a-{i}" for i in range(n)] + [f"b-{i}" for i in range(n)])


def test_an_engine_holding_an_old_copy_does_not_drop_a_vault_added_elsewhere(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "data")
    for d in ("one", "two", "three"):
        (tmp_path / d).mkdir()
    app = Engine(paths, embedder_factory=None)
    app.add_vault(tmp_path / "one")
    cli = Engine(paths, embedder_factory=None)  # another process: `cairn index --vault two`
    cli.add_vault(tmp_path / "two")
    app.add_vault(tmp_path / "three")
    assert [v.name for v in load_config(paths).vaults] == ["one", "two", "three"]
    app.update_config(replace(app.config, rrf_k=42))  # a settings save from the app
    on_disk = load_config(paths)
    assert [v.name for v in on_disk.vaults] == ["one", "two", "three"]
    assert on_disk.rrf_k == 42


def test_reload_config_shows_vaults_registered_by_another_process(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "data")
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    app = Engine(paths, embedder_factory=None)
    app.add_vault(tmp_path / "one")
    assert app.reload_config() is False
    Engine(paths, embedder_factory=None).add_vault(tmp_path / "two")
    assert app.reload_config() is True
    assert [v.name for v in app.vaults] == ["one", "two"]


def test_merge_settings_keeps_user_removals_and_additions_and_foreign_vaults() -> None:
    a, b, c, d = (VaultConfig(n, f"/{n}") for n in "abcd")
    before = EngineConfig(vaults=(a, b))
    wanted = EngineConfig(vaults=(a, d), top_n=7)  # the user removed b and added d
    disk = EngineConfig(vaults=(a, b, c))  # c came from the CLI meanwhile
    merged = merge_settings(disk, before, wanted)
    assert [v.name for v in merged.vaults] == ["a", "c", "d"]
    assert merged.top_n == 7


def test_a_damaged_config_is_set_aside_with_a_timestamp_and_reported(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "data")
    paths.ensure()
    paths.config_file.write_text('{"vaults": [{"name": "x", "root": "/x"}', encoding="utf-8")  # cut short
    loaded = read_config(paths)
    assert loaded.config == EngineConfig()
    kept = list(paths.data_dir.glob("config.damaged-*.json"))
    assert len(kept) == 1
    assert kept[0].read_text(encoding="utf-8").startswith('{"vaults"')
    assert kept[0].name in (loaded.problem or "")
    assert not paths.config_file.exists()
    engine = Engine(paths, embedder_factory=None)  # nothing more to report: the file was set aside already
    assert engine.config_problem is None


def test_the_engine_reports_a_damaged_config_it_found(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "data")
    paths.ensure()
    paths.config_file.write_text(json.dumps({"vaults": "not a list of vaults"}), encoding="utf-8")
    engine = Engine(paths, embedder_factory=None)
    assert engine.config_problem is not None and "damaged" in engine.config_problem
    assert engine.vaults == ()


def test_modify_config_writes_atomically_and_only_on_change(tmp_path: Path) -> None:
    paths = AppPaths(tmp_path / "data")
    save_config(paths, EngineConfig(top_n=5))
    before = paths.config_file.stat().st_mtime_ns
    modify_config(paths, lambda c: c)
    assert paths.config_file.stat().st_mtime_ns == before
    modify_config(paths, lambda c: replace(c, top_n=9))
    assert load_config(paths).top_n == 9
    assert not list(paths.data_dir.glob(".config.json.*.tmp"))
