"""Where a vault may be: not inside another vault, not around one, not around Cairn's own data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.base.errors import UsageError
from core.base.paths import AppPaths
from core.engine import Engine


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return Engine(AppPaths(tmp_path / "home"), embedder_factory=None)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    (tmp_path / "notes" / "Projects" / "Cairn").mkdir(parents=True)
    return tmp_path / "notes"


def test_the_same_folder_again_is_the_same_vault(engine: Engine, notes: Path) -> None:
    first = engine.add_vault(notes)
    assert engine.add_vault(notes / "Projects" / "..") == first
    assert [v.name for v in engine.config.vaults] == ["notes"]


def test_a_folder_inside_a_vault_is_refused_with_what_to_do_instead(engine: Engine, notes: Path) -> None:
    engine.add_vault(notes)
    with pytest.raises(UsageError, match="inside the vault “notes”.*select the folder in the tree"):
        engine.add_vault(notes / "Projects" / "Cairn")
    assert len(engine.config.vaults) == 1


def test_a_folder_holding_a_vault_is_refused(engine: Engine, notes: Path) -> None:
    engine.add_vault(notes / "Projects")
    with pytest.raises(UsageError, match="contains the vault “Projects”.*remove that vault first"):
        engine.add_vault(notes)


def test_sibling_folders_with_a_common_prefix_are_both_vaults(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes-archive").mkdir()
    engine.add_vault(tmp_path / "notes")
    engine.add_vault(tmp_path / "notes-archive")
    assert [v.name for v in engine.config.vaults] == ["notes", "notes-archive"]


def test_a_folder_holding_cairns_own_data_is_refused(tmp_path: Path) -> None:
    engine = Engine(AppPaths(tmp_path / "stuff" / "cairn-home"), embedder_factory=None)
    with pytest.raises(UsageError, match="holds Cairn's own index folder"):
        engine.add_vault(tmp_path / "stuff")
    with pytest.raises(UsageError, match="holds Cairn's own index folder"):
        engine.add_vault(tmp_path / "stuff" / "cairn-home")
    assert engine.config.vaults == ()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_a_symlink_into_a_vault_is_seen_through(engine: Engine, notes: Path, tmp_path: Path) -> None:
    engine.add_vault(notes)
    link = tmp_path / "shortcut"
    link.symlink_to(notes / "Projects", target_is_directory=True)
    with pytest.raises(UsageError, match="inside the vault"):
        engine.add_vault(link)
