"""Hybrid search with the real built-in embedder: the Why tab shows the core's vector rank and cosine.

Embedding the whole sample vault takes ~20 s on a 2-core machine, over the
20 s budget for one test, so this test copies two of its folders (about 40
chunks) and embeds those.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.search.search import SearchRequest
from desktop.controller import AppController
from desktop.main_window import MainWindow
from tests.desktop.helpers import copy_folders, index_vault, search_and_wait

QUERY = "how long does the dough rest"


def test_hybrid_why_numbers_equal_the_core_with_the_real_embedder(
    qtbot: Any, make_controller: Callable[..., AppController], make_window: Callable[..., MainWindow], sample_vault: Path, tmp_path: Path
) -> None:
    vault = copy_folders(sample_vault, tmp_path / "kitchen", ["Recipes", "Running"])
    controller = make_controller(embedder_factory=AppController.DEFAULT_FACTORY)
    window = make_window(controller)
    index_vault(qtbot, controller, vault, timeout_ms=18000)
    snap = controller.vault_snapshot("kitchen")
    assert snap is not None and snap.status.semantic == "ok"
    search_and_wait(qtbot, window, QUERY)
    response = controller.response
    assert response.mode == "hybrid" and not response.warnings
    core = controller.engine.search(SearchRequest(QUERY, "hybrid", controller.settings.results_k))
    both = next(i for i, h in enumerate(core.hits) if h.bm25 is not None and h.vector is not None)
    window.results.view.setCurrentIndex(window.results.model.index(both))
    expected = core.hits[both]
    assert window.why.hit is not None and window.why.hit.chunk == expected.chunk
    assert f"rank {expected.vector.rank} of" in window.why.vector.text()
    assert f"cosine {expected.vector.score:.4f}" in window.why.vector.text()
    assert f"score {expected.bm25.score:.3f}" in window.why.bm25.text()
    assert window.why.term_values() == [(t.name, t.value) for t in expected.contributions] + [("= score", expected.score)]
    assert sum(v for name, v in window.why.term_values()[:-1]) == expected.score
    assert window.debug.candidates_shown("vector")[0][1:] == (1, round(core.vector_candidates[0].score, 4))
