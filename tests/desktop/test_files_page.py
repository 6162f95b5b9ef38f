"""Settings › Files: a switch and a count per kind; the chat exports' place in answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.controller import AppController
from desktop.dialogs.files_page import FilesSettingsPanel
from desktop.dialogs.settings_dialog import SettingsDialog
from tests.desktop.helpers import index_vault
from tests.kinds_writer import claude_export, write_docx, write_json


def test_files_page_counts_each_kind_and_saves_the_switches(qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path) -> None:
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Plan.md").write_text("# Plan\n\nBuy seeds.\n")
    write_docx(vault / "report.docx")
    (vault / "broken.docx").write_bytes(b"PK\x03\x04 not really")
    write_json(vault / "conversations.json", claude_export(3))
    controller = make_controller()
    index_vault(qtbot, controller, vault, timeout_ms=60000)
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(FilesSettingsPanel)
    assert page.switches["docx"].text() == "Word documents (.docx) — 1 indexed, 1 skipped"
    assert page.switches["chat"].text() == "AI chat exports (conversations.json) — 1 indexed"
    assert all(box.isChecked() for name, box in page.switches.items() if name != "image") and page.ask_chats.isChecked()
    assert not page.switches["image"].isChecked()  # OCR is opt-in
    page.switches["email"].setChecked(False)
    page.ask_chats.setChecked(False)
    with qtbot.waitSignal(controller.indexFinished, timeout=60000):
        dialog.accept()
    assert controller.engine.config.kinds_off == ("email", "image") and controller.engine.config.ask_chats is False
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    assert not again.page(FilesSettingsPanel).switches["email"].isChecked()
