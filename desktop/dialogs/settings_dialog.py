"""The settings dialog: a loop over page classes, each with `load(draft)` / `save(draft)` (Picard's options pages)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QListWidget, QStackedWidget, QVBoxLayout, QWidget

from desktop.controller import AppController
from desktop.dialogs.agents_page import AgentsSettingsPanel
from desktop.dialogs.files_page import FilesSettingsPanel
from desktop.dialogs.keys_page import ApiKeysSettingsPanel
from desktop.dialogs.service_pages import EmbeddingSettingsPanel, LanguageModelSettingsPanel
from desktop.dialogs.settings_pages import GeneralSettingsPanel, SearchSettingsPanel, SettingsDraft, SettingsPanelBase

#: The pages, in the order the dialog lists them. A new page is one class and one line here.
PAGES: list[type[SettingsPanelBase]] = [
    GeneralSettingsPanel,
    SearchSettingsPanel,
    FilesSettingsPanel,
    EmbeddingSettingsPanel,
    LanguageModelSettingsPanel,
    ApiKeysSettingsPanel,
    AgentsSettingsPanel,
]


class SettingsDialog(QDialog):
    """Edits a draft of the app's and the engine's settings; OK or Apply hands it to the controller."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.setWindowTitle("Settings")
        self.resize(760, 520)
        self.pages: list[SettingsPanelBase] = [page(controller, self) for page in PAGES]
        self.index = QListWidget(self)
        self.index.setAccessibleName("Settings pages")
        self.index.setFixedWidth(170)
        self.stack = QStackedWidget(self)
        for page in self.pages:
            self.index.addItem(page.title)
            self.stack.addWidget(page)
        self.index.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.index.setCurrentRow(0)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel | QDialogButtonBox.StandardButton.Apply,
            self,
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        body = QHBoxLayout()
        body.addWidget(self.index)
        body.addWidget(self.stack, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(body, 1)
        layout.addWidget(self.buttons)
        self.load()

    def page(self, kind: type[SettingsPanelBase]) -> SettingsPanelBase:
        return next(p for p in self.pages if isinstance(p, kind))

    def show_page(self, kind: type[SettingsPanelBase]) -> None:
        self.index.setCurrentRow(self.pages.index(self.page(kind)))

    def load(self) -> None:
        draft = SettingsDraft(self._controller.settings, self._controller.engine.config)
        for page in self.pages:
            page.load(draft)

    def apply(self) -> None:
        draft = SettingsDraft(self._controller.settings, self._controller.engine.config)
        for page in self.pages:
            page.save(draft)
        self._controller.apply_settings(draft.app, draft.engine)

    def accept(self) -> None:
        self.apply()
        super().accept()
