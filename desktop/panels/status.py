"""Status bar contents: index state per vault, indexing progress with cancel, search warnings."""

from __future__ import annotations

import html

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from core.base.models import SearchResponse
from core.base.vault_state import LiveState, Phase, VaultProgress, summarise
from desktop.controller import AppController
from desktop.progress_board import ProgressBoard
from desktop.state import VaultSnapshot, describe_status
from desktop.theme import colours
from desktop.vault_models import MULTILINGUAL, multilingual_installed, switch_vault_model

STATE_COLOURS = {"healthy": "#2e7d32", "degraded": "#b26a00", "not built": "#777777", "indexing": "#1565c0"}


class StatusPanel(QWidget):
    """Lives in the window's status bar; every part has an accessible name for screen readers."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._indexing: str | None = None
        self.vaults = QLabel("No vaults yet", self)
        self.vaults.setAccessibleName("Index state")
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName("Indexing progress")
        self.progress.setFixedWidth(160)
        self.progress.setTextVisible(True)
        self.progress.setVisible(False)
        self.cancel = QPushButton("Cancel", self)
        self.cancel.setAccessibleName("Cancel indexing")
        self.cancel.setVisible(False)
        self.cancel.clicked.connect(controller.cancel_index)
        self.resume = QPushButton("Resume", self)
        self.resume.setAccessibleName("Resume indexing")
        self.resume.setToolTip("Finish what Cancel stopped; notes already read are not read again")
        self.resume.setVisible(False)
        self.resume.clicked.connect(controller.resume_embedding)
        self.warnings = QLabel(self)
        self.warnings.setAccessibleName("Search warnings")
        self.warnings.setWordWrap(False)
        self.note = QLabel(self)
        self.note.setAccessibleName("Last message")
        self._note_timer = QTimer(self)
        self._note_timer.setSingleShot(True)
        self._note_timer.timeout.connect(self._clear_note)
        # The language advice's one-click answer: this vault, and only it, moves to the multilingual model.
        self.switch_model = QPushButton(self)
        self.switch_model.setAccessibleName("Switch this vault to the multilingual model")
        self.switch_model.setVisible(False)
        self.switch_model.clicked.connect(self._switch_model)
        self._advice_vault: str | None = None
        self.health = QPushButton("Index health…", self)
        self.health.setAccessibleName("Show index health")
        self.health.setFlat(True)
        self._lay_out()
        self._advised: set[str] = set()
        controller.snapshotChanged.connect(self._on_snapshot)
        controller.indexStarted.connect(self._on_started)
        controller.indexProgress.connect(self._on_progress)
        controller.indexFinished.connect(self._on_finished)
        controller.resultsReady.connect(self._on_results)
        controller.resultsCleared.connect(lambda: self.set_warnings(()))
        controller.message.connect(self.show_message)
        controller.board.changed.connect(lambda _all: self._show_summary(self._controller.snapshot))
        controller.indexFailed.connect(self.show_message)
        if controller.engine.config_problem:  # a damaged config.json was set aside at start
            self.show_message(controller.engine.config_problem, 60000)

    def _lay_out(self) -> None:
        """Vault state, progress and Cancel, warnings, the last message, the model switch, Index health."""
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.vaults)
        layout.addWidget(self.progress)
        layout.addWidget(self.cancel)
        layout.addWidget(self.resume)
        layout.addWidget(self.warnings, 1)
        layout.addWidget(self.note)
        layout.addWidget(self.switch_model)
        layout.addWidget(self.health)

    def show_message(self, text: str, msecs: int = 8000) -> None:
        """A passing message (copied a link, a vault could not be indexed); the tooltip keeps it whole."""
        self.switch_model.setVisible(False)
        self.note.setText(html.escape(text if len(text) < 90 else text[:87] + "…"))
        self.note.setToolTip(text)
        self._note_timer.start(msecs)

    def _on_snapshot(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        self._show_summary(snapshots)
        for snap in snapshots:  # e.g. a mostly Chinese vault on the English-only model: said once a session
            if snap.status.advice and snap.name not in self._advised:
                self._advised.add(snap.name)
                self.show_message(f"{snap.name}: {snap.status.advice}", 30000)
                if multilingual_installed():
                    self._advice_vault = snap.name
                    self.switch_model.setText(f"Use the multilingual model for {snap.name}")
                    self.switch_model.setVisible(True)

    def _clear_note(self) -> None:
        self.note.clear()
        self.switch_model.setVisible(False)

    def _switch_model(self) -> None:
        name = self._advice_vault
        if name is None:
            return
        self._advice_vault = None
        switch_vault_model(self._controller, name, MULTILINGUAL)
        self.show_message(f"{name}: its notes are re-embedded with the multilingual model (Settings › General to undo)")

    def _show_summary(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        """The one line every vault's state is told in, from the progress board (as the tree and Index health)."""
        board = self._controller.board
        self.vaults.setText(_vault_summary(snapshots, board))
        self.vaults.setToolTip("\n".join(_tooltip_line(s.name, board.get(s.name)) + _languages(s) for s in snapshots))
        self.resume.setVisible(bool(board.paused) and self._indexing is None)

    def _on_started(self, names: list[str]) -> None:
        self._indexing = names[0] if names else ""
        self.progress.setRange(0, 0)  # busy until the first count arrives
        self.progress.setVisible(True)
        self.cancel.setVisible(True)
        self.cancel.setEnabled(True)
        self.resume.setVisible(False)

    def _on_progress(self, vault: str, done: int, total: int, phase: str) -> None:
        self._indexing = vault
        percent = int(done * 100 / total) if total else 100
        self.progress.setRange(0, 100)
        self.progress.setValue(percent)
        self.progress.setFormat(f"{'reading' if phase == 'keyword' else phase} %p%")

    def _on_finished(self, reports: list) -> None:
        self._indexing = None
        self.progress.setVisible(False)
        self.cancel.setVisible(False)
        self._show_summary(self._controller.snapshot)

    def _on_results(self, response: SearchResponse) -> None:
        self.set_warnings(response.warnings)

    def set_warnings(self, warnings: tuple[str, ...]) -> None:
        if not warnings:
            self.warnings.clear()
            self.warnings.setToolTip("")
            return
        first = warnings[0] if len(warnings) == 1 else f"{warnings[0]} (+{len(warnings) - 1} more)"
        self.warnings.setText(f"<span style='color:{colours(self.palette()).warn}'>⚠ {html.escape(first)}</span>")
        self.warnings.setToolTip("\n".join(warnings))


def _coloured(state: str, text: str) -> str:
    return f"<span style='color:{STATE_COLOURS.get(state, '#777777')}'>●</span> {text}"


def _tooltip_line(name: str, p: VaultProgress | None) -> str:
    if p is None:
        return name
    line = f"{name}: {p.sentence()}"
    if p.reason:
        line += f" — {p.reason}"
    if p.live is LiveState.FAILED:
        line += f"\n  live updates: {p.live_reason}"
    elif p.live is not LiveState.OFF:
        line += f"; live updates {p.live.value}"
    return line


def _languages(snap: VaultSnapshot) -> str:
    langs = ", ".join(f"{lang} {share:.0%}" for lang, share in snap.status.languages[:4])
    return f"\n  languages {langs}" if langs else ""


def _vault_summary(snapshots: tuple[VaultSnapshot, ...], board: ProgressBoard) -> str:
    """One vault: its sentence; several: one short line ("3 vaults · 1 embedding 43%"), never clipped."""
    if not snapshots:
        return "No vaults yet"
    states = [describe_status(snap, board.get(snap.name)) for snap in snapshots]
    if len(snapshots) == 1:
        state, text = states[0]
        return _coloured(state, html.escape(text))
    progress = [p for p in (board.get(s.name) for s in snapshots) if p is not None]
    words = [state for state, _ in states]
    state = next((w for w in ("indexing", "degraded", "not built") if w in words), "healthy")
    if any(p.phase is Phase.FAILED for p in progress):
        state = "degraded"
    return _coloured(state, html.escape(summarise(progress)))
