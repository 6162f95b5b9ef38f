"""Settings › Agents with pytest-qt: the server switch starts and stops a real server on 127.0.0.1
without stalling the window, a new agent's token is shown once and works, and the log lists what
agents read, newest first, per client and per note."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from core.agents.audit import AuditEntry
from core.agents.runner import find_running
from core.base.paths import AppPaths
from desktop.controller import AppController
from desktop.dialogs.agents_page import AgentsSettingsPanel
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.settings import SettingsStore


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def open_page(qtbot: Any, controller: AppController) -> tuple[SettingsDialog, AgentsSettingsPanel]:
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(AgentsSettingsPanel)
    assert isinstance(page, AgentsSettingsPanel)
    dialog.show_page(AgentsSettingsPanel)
    return dialog, page


def test_the_server_is_off_by_default_and_the_switch_starts_and_stops_it(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    controller = make_controller()
    dialog, page = open_page(qtbot, controller)
    assert not page.enabled.isChecked() and page.state_label.text() == "Stopped"
    assert find_running(AppPaths.from_env()) is None
    page.port.setValue(free_port())
    started = time.perf_counter()
    page.enabled.setChecked(True)
    assert time.perf_counter() - started < 0.5  # binding only; serving happens on the server's thread
    qtbot.waitUntil(lambda: page.state_label.text().startswith("Running at http://127.0.0.1:"), timeout=10000)
    assert page.state_label.text().endswith(f":{page.port.value()}/mcp")
    assert find_running(AppPaths.from_env()) is not None
    page.enabled.setChecked(False)
    qtbot.waitUntil(lambda: page.state_label.text() == "Stopped", timeout=10000)
    assert find_running(AppPaths.from_env()) is None
    dialog.accept()
    assert controller.settings.agents_server is False


def test_a_new_token_is_shown_once_works_and_the_log_lists_its_calls(
    qtbot: Any, make_controller: Callable[..., AppController], sample_vault: Path
) -> None:
    controller = make_controller()
    controller.engine.add_vault(sample_vault)
    controller.engine.sync(embed=False)
    dialog, page = open_page(qtbot, controller)
    page.port.setValue(free_port())
    page.enabled.setChecked(True)
    qtbot.waitUntil(lambda: controller.agents.url != "", timeout=10000)
    page.new_name.setText("claude")
    page.new_where.setText("sample-vault/Recipes")
    page.new_internal.setChecked(True)
    page.add_button.click()
    token = page.token.text()
    assert token.startswith("cairn_") and page.table.rowCount() == 1
    assert token not in (Path(AppPaths.from_env().data_dir) / "agents" / "agents.json").read_text()
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    for query in ("soup", "bread"):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_notes", "arguments": {"query": query, "k": 2}}}
        assert httpx.post(controller.agents.url, json=body, headers=headers, timeout=20).status_code == 200
    page.refresh_log()
    qtbot.waitUntil(lambda: page.log_table.rowCount() == 2, timeout=10000)
    assert page.log_table.item(0, 3).text() == "bread" and page.log_table.item(1, 3).text() == "soup"  # newest first
    assert "Recipes/" in page.log_table.item(1, 4).text()
    page.note_filter.setText("tomato soup")
    page.refresh_log()
    qtbot.waitUntil(lambda: page.log_table.rowCount() == 1, timeout=10000)
    dialog.reject()
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    assert again.page(AgentsSettingsPanel).token.text() == ""  # never shown again
    again.page(AgentsSettingsPanel).table.selectRow(0)
    again.page(AgentsSettingsPanel).revoke_selected()
    assert httpx.post(controller.agents.url, json=body, headers=headers, timeout=20).status_code == 401


def test_the_app_starts_the_server_when_enabled_and_stops_it_on_quit(
    qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path
) -> None:
    from dataclasses import replace

    from desktop.settings import Settings

    store = SettingsStore.at(settings_file)
    store.save(replace(Settings(), agents_server=True, agents_port=free_port()))
    controller = make_controller()
    qtbot.waitUntil(lambda: controller.agents.state == "running", timeout=10000)
    url = controller.agents.url
    started = time.perf_counter()
    controller.shutdown()
    assert time.perf_counter() - started < 5
    assert controller.agents.state == "stopped" and find_running(AppPaths.from_env()) is None
    try:
        httpx.post(url, json={}, timeout=2)
        reached = True
    except httpx.ConnectError:
        reached = False
    assert not reached


def test_log_rows_show_refs_for_ok_calls_and_the_outcome_otherwise(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    controller = make_controller()
    _, page = open_page(qtbot, controller)
    page.show_log([AuditEntry("a", "fetch_note_chunk", "not found", "v/x.md#0"), AuditEntry("a", "search_notes", "ok", "q", ("v/y.md#1",))])
    assert page.log_table.item(0, 4).text() == "not found" and page.log_table.item(1, 4).text() == "v/y.md#1"


def test_a_taken_port_is_reported_and_the_switch_goes_back_off(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    import socket

    controller = make_controller()
    _, page = open_page(qtbot, controller)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        page.port.setValue(taken.getsockname()[1])
        with qtbot.waitSignal(controller.agents.failed, timeout=10000) as failed:
            page.enabled.setChecked(True)
    assert "cannot listen on 127.0.0.1" in failed.args[0]
    qtbot.waitUntil(lambda: not page.enabled.isChecked(), timeout=5000)
    assert page.state_label.text().startswith("Not running: cannot listen")
