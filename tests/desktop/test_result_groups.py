"""The results panel shows matches first, a divider, then a few related notes; its header counts matches."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.base.models import HitKind
from desktop.controller import AppController
from desktop.main_window import MainWindow
from desktop.models import DividerRole, HitRole
from desktop.panels.results import results_summary
from tests.desktop.helpers import FakeEmbedder, index_vault, search_and_wait

NOTES = {
    "Rare.md": "# Rare\n\nThe zorblat grows in garden soil with water.\n",
    **{f"Garden {i}.md": f"# Garden {i}\n\nGarden soil and water on day {i}.\n" for i in range(12)},
}


def test_one_match_then_a_divided_related_section_and_a_header_that_counts_matches(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], tmp_path: Path
) -> None:
    vault = tmp_path / "garden"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    controller = make_controller(embedder_factory=lambda _vc: FakeEmbedder())
    window = make_window(controller)
    index_vault(qtbot, controller, vault)
    qtbot.waitUntil(lambda: (snap := controller.vault_snapshot("garden")) is not None and snap.status.semantic == "ok", timeout=15000)
    search_and_wait(qtbot, window, "zorblat garden soil")  # vectors: every garden note is near
    search_and_wait(qtbot, window, "zorblat")
    response = controller.response
    assert response.mode == "hybrid"
    model = window.results.model
    kinds = [model.index(r).data(HitRole).kind for r in range(model.rowCount())]
    assert kinds[0] == HitKind.MATCH and kinds.count(HitKind.MATCH) == 1
    assert 1 <= kinds.count(HitKind.RELATED) <= 3 and model.rowCount() < 10
    dividers = [r for r in range(model.rowCount()) if model.index(r).data(DividerRole)]
    assert dividers == [1]
    view = window.results.view
    assert view.visualRect(model.index(1)).height() > view.visualRect(model.index(2)).height()  # room for the divider
    summary = window.results.summary.text()
    assert summary.startswith("1 match · no other exact matches;") and "related notes below" in summary
    assert summary == results_summary(response)
    search_and_wait(qtbot, window, "garden")
    assert window.results.summary.text().startswith(f"{controller.response.match_count} matches")
    assert "no other exact matches" not in window.results.summary.text()
    assert not any(model.index(r).data(DividerRole) for r in range(model.rowCount()))
