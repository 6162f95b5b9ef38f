"""`Engine.warm_up`: the first search's one-time costs paid before the user searches (issue #21)."""

from __future__ import annotations

import shutil
from pathlib import Path

from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.embedding import MiniLMEmbedder
from core.search.search import SearchRequest


def test_warm_up_opens_the_vectors_and_loads_the_model_before_the_first_search(sample_vault: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(sample_vault, vault)
    builder = Engine(AppPaths.from_env())
    builder.sync([builder.add_vault(vault).name])
    fresh = Engine(AppPaths.from_env())  # a newly opened app: nothing loaded yet
    name = fresh.vaults[0].name
    assert name not in fresh._vectors and not fresh._embedders.loaded()
    fresh.warm_up()
    assert name in fresh._vectors
    (emb,) = fresh._embedders.loaded()
    assert isinstance(emb, MiniLMEmbedder) and emb._session is not None
    response = fresh.search(SearchRequest("tomato soup", k=3))
    assert response.mode == "hybrid" and response.hits


def test_warm_up_with_no_built_vault_does_nothing_and_never_raises() -> None:
    engine = Engine(AppPaths.from_env())
    engine.warm_up()
    assert not engine._embedders.loaded() and not engine._vectors
