"""One config, many writers: the app shows vaults other processes register and never drops them (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.base.config import load_config
from core.base.paths import AppPaths
from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import index_vault

REPO = Path(__file__).resolve().parents[2]


def register_in_another_process(folder: Path) -> None:
    """What `cairn index --vault X` does to config.json, from a real second process."""
    code = (
        "import sys; from pathlib import Path; from core.base.paths import AppPaths; from core.engine import Engine; "
        "Engine(AppPaths.from_env(), embedder_factory=None).add_vault(Path(sys.argv[1]))"
    )
    subprocess.run([sys.executable, "-c", code, str(folder)], cwd=REPO, check=True, timeout=60)


def test_a_vault_registered_by_the_cli_appears_and_survives_adding_another(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    controller = make_controller()
    window = make_window(controller)
    first, cli, third = (tmp_path / n for n in ("first", "from-cli", "third"))
    for folder in (first, cli, third):
        folder.mkdir()
        (folder / "note.md").write_text(f"# {folder.name}\n\nA note in {folder.name}.\n", encoding="utf-8")
    index_vault(qtbot, controller, first)
    register_in_another_process(cli)
    qtbot.waitUntil(lambda: "from-cli" in [v.name for v in controller.vaults], timeout=5000)  # the 2 s poll
    qtbot.waitUntil(lambda: controller.vault_snapshot("from-cli") is not None, timeout=5000)
    assert "from-cli" in window.status.note.toolTip()
    index_vault(qtbot, controller, third)
    assert [v.name for v in load_config(AppPaths.from_env()).vaults] == ["first", "from-cli", "third"]
    controller.apply_settings(controller.settings, replace(controller.engine.config, rrf_k=33))  # the watcher stops first
    qtbot.waitUntil(lambda: load_config(AppPaths.from_env()).rrf_k == 33, timeout=10000)
    assert [v.name for v in load_config(AppPaths.from_env()).vaults] == ["first", "from-cli", "third"]


def test_a_damaged_config_is_set_aside_and_the_window_says_so(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow]
) -> None:
    paths = AppPaths.from_env()
    paths.ensure()
    paths.config_file.write_text('{"vaults": [', encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    kept = list(paths.data_dir.glob("config.damaged-*.json"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == '{"vaults": ['
    assert kept[0].name in window.status.note.toolTip()
    assert not paths.config_file.exists() or json.loads(paths.config_file.read_text(encoding="utf-8"))
