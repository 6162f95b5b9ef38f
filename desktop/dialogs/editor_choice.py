"""When "Open in editor" fails: say why and offer the way out, choosing an editor program.

Before, a note with no program registered for `.md` (or an editor command that did
not start) failed with a line in the status bar that was easy to miss. Now the
failure opens a small question: "Choose editor…" picks a program with a file dialog,
saves it as the editor command (Settings › General shows and edits it) and opens
the note with it at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from desktop.controller import AppController

EditorRetry = Callable[[str], bool]  # opens the note again with this editor command


def command_for_program(program: str) -> str:
    """The editor command for a chosen program: the note's path as its one argument."""
    return f'"{program}" {{path}}'


def choose_program(parent: QWidget | None) -> str:
    """Ask for an editor program (an app bundle or executable); "" when cancelled."""
    start = "/Applications" if sys.platform == "darwin" else ("C:/Program Files" if sys.platform == "win32" else "/usr/bin")
    chosen, _ = QFileDialog.getOpenFileName(parent, "Choose the editor to open notes with", start)
    return chosen


class EditorChoice:
    """Says an editor failure in the status line and offers "Choose editor…" beside it.

    The question is a window-modal box opened without blocking (`open`, not `exec`);
    `choose` (the file dialog) is replaced in tests.
    """

    def __init__(self, controller: AppController, parent: QWidget | None) -> None:
        self._controller = controller
        self._parent = parent
        self.box: QMessageBox | None = None
        self.choose: Callable[[], str] = lambda: choose_program(parent)

    def failed(self, message: str, retry: EditorRetry) -> None:
        self._controller.message.emit(message)
        if self.box is not None:  # one question at a time: the newest failure's
            self.box.close()
            self.box.deleteLater()
        box = QMessageBox(QMessageBox.Icon.Warning, "Could not open the note", message, QMessageBox.StandardButton.Close, self._parent)
        box.setInformativeText("Pick the program to open notes with; it is kept in Settings › General › Editor command.")
        self.choose_button = box.addButton("Choose editor…", QMessageBox.ButtonRole.AcceptRole)
        self.choose_button.clicked.connect(lambda: self.choose_and_retry(retry))
        self.box = box
        box.open()

    def choose_and_retry(self, retry: EditorRetry) -> bool:
        """An editor program chosen, saved as the editor command and tried at once; True when the note opened."""
        program = self.choose()
        if not program:
            return False
        command = command_for_program(str(Path(program)))
        settings = replace(self._controller.settings, editor_command=command)
        self._controller.apply_settings(settings, self._controller.engine.config)
        return retry(command)
