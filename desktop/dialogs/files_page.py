"""Settings › Files: which kinds of file beside notes are indexed, with how many of each."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from core.vault.kinds import KINDS, Kind
from core.vault.ocr_text import ocr_installed
from desktop.controller import AppController
from desktop.dialogs.settings_pages import SettingsDraft, SettingsPanelBase


def kind_caption(kind: Kind, indexed: int, skipped: int) -> str:
    """'Word documents (.docx) — 3 indexed, 1 skipped'."""
    names = ", ".join((*kind.suffixes, *kind.file_names))
    counts = f"{indexed} indexed" + (f", {skipped} skipped" if skipped else "")
    return f"{kind.label[1][:1].upper()}{kind.label[1][1:]} ({names}) — {counts}"


class FilesSettingsPanel(SettingsPanelBase):
    """A switch per kind (a kind switched off is not read, and leaves the index on the next sync)."""

    title = "Files"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<b>Files beside notes</b> — Markdown notes are always indexed; each kind below can be left out.", self))
        self.switches: dict[str, QCheckBox] = {}
        for kind in KINDS:
            box = QCheckBox(self)
            box.setAccessibleName(f"Index {kind.label[1]}")
            self.switches[kind.name] = box
            layout.addWidget(box)
        if not ocr_installed():  # the switch would do nothing: say how to get it
            self.switches["image"].setEnabled(False)
            self.switches["image"].setToolTip("Needs the optional OCR extra: pip install 'cairn-notes[ocr]'")
        self.ask_chats = QCheckBox("Quote AI chat exports in Ask answers (they hold an assistant's words, not your own notes)", self)
        self.ask_chats.setAccessibleName("Use AI chat exports in answers")
        layout.addSpacing(8)
        layout.addWidget(self.ask_chats)
        layout.addWidget(QLabel("Files that could not be read are listed, with the reason, in Index health.", self))
        layout.addStretch(1)

    def load(self, draft: SettingsDraft) -> None:
        indexed: Counter[str] = Counter()
        skipped: Counter[str] = Counter()
        for snap in self._controller.snapshot:
            for count in snap.status.attachments:
                indexed[count.kind] += count.indexed
                skipped[count.kind] += count.skipped_total
        for kind in KINDS:
            box = self.switches[kind.name]
            box.setText(kind_caption(kind, indexed[kind.name], skipped[kind.name]))
            box.setChecked(kind.name not in draft.engine.kinds_off)
        self.ask_chats.setChecked(draft.engine.ask_chats)

    def save(self, draft: SettingsDraft) -> None:
        off = tuple(name for name, box in self.switches.items() if not box.isChecked())
        draft.engine = replace(draft.engine, kinds_off=off, ask_chats=self.ask_chats.isChecked())
