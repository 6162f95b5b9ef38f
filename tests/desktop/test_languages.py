"""The Debug tab shows each result's detected language, and `lang:` filters the results."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import index_vault, search_and_wait

NOTES = {
    "Zettel/Backup.md": "# Backup\n\nDie Dateien werden jede Nacht mit restic auf die externe Festplatte gesichert.\n",
    "笔记/备份.md": "# 备份\n\n每天晚上用 restic 把文件备份到外部硬盘。\n",
    "Notes/Backup.md": "# Backup\n\nEvery night restic backs the files up to the external disk.\n",
}


def test_debug_shows_languages_and_lang_filters(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    vault = tmp_path / "mixed"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    index_vault(qtbot, controller, vault)
    search_and_wait(qtbot, window, "restic")
    assert sorted(lang for _, lang in window.debug.languages_shown()) == ["de", "en", "zh"]
    search_and_wait(qtbot, window, "restic lang:zh")
    assert [h.chunk.rel_path for h in controller.response.hits] == ["笔记/备份.md"]
    assert window.debug.languages_shown() == [("笔记/备份.md #0", "zh")]


def test_a_mostly_chinese_vault_is_told_about_the_multilingual_model(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    vault = tmp_path / "笔记"
    for i, topic in enumerate(["备份", "旅行", "读书", "菜谱"]):
        (vault / f"{topic}.md").parent.mkdir(parents=True, exist_ok=True)
        (vault / f"{topic}.md").write_text(f"# {topic}\n\n这是关于{topic}的第{i}篇笔记，记录了很多细节和想法。\n", encoding="utf-8")
    controller = make_controller()
    window = make_window(controller)
    index_vault(qtbot, controller, vault)
    qtbot.waitUntil(lambda: "Chinese" in window.status.note.toolTip(), timeout=5000)
    assert "multilingual" in window.status.note.toolTip()
    assert "zh 100%" in window.status.vaults.toolTip()
