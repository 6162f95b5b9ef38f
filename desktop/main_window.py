"""The main window: composes the panels around one controller and keeps its layout between runs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEventLoop, QMimeData, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QMainWindow,
    QProgressDialog,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.base.models import Hit
from desktop.controller import AppController
from desktop.dialogs.editor_choice import EditorChoice
from desktop.dialogs.health_dialog import IndexHealthDialog
from desktop.dialogs.settings_dialog import SettingsDialog
from desktop.panels.ask import AskPanel
from desktop.panels.ask_room import AskRoom
from desktop.panels.debug import DebugPanel
from desktop.panels.preview import PreviewPanel
from desktop.panels.results import ResultsPanel
from desktop.panels.search_bar import SearchBarPanel
from desktop.panels.status import StatusPanel
from desktop.panels.vault_tree import VaultTreePanel
from desktop.panels.welcome import WelcomePanel
from desktop.panels.why import WhyPanel
from desktop.state import VaultSnapshot

#: Closing shows "Saving index…" only when stopping the watcher and flushing takes longer than this.
SAVING_NOTE_AFTER_MS = 300
#: Past this, the window closes anyway; an index left dirty is reconciled at the next start.
CLOSE_GIVE_UP_MS = 120_000


class MainWindow(QMainWindow):
    """Vault tree | results | Preview/Why/Debug/Ask tabs, with the query bar on top.

    Args:
        controller: Everything the window shows comes from it.
        sample_vault: The bundled sample vault, when this copy of Cairn has one.
    """

    def __init__(self, controller: AppController, sample_vault: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._sample_vault = sample_vault
        self._closed = False
        self.saving_dialog: QProgressDialog | None = None
        self.setWindowTitle("Cairn")
        self.setAcceptDrops(True)  # a folder dropped on the window is added as a vault
        self.setObjectName("CairnMainWindow")

        self.search_bar = SearchBarPanel(controller, self)
        self.tree = VaultTreePanel(controller, self)
        self.results = ResultsPanel(controller, self)
        self.preview = PreviewPanel(controller, self)
        self.why = WhyPanel(controller, self)
        self.debug = DebugPanel(controller, self)
        self.ask = AskPanel(controller, self)
        self.tabs = QTabWidget(self)
        self.tabs.setAccessibleName("Details of the selected result")
        self.tabs.addTab(self.preview, "Preview")
        self.tabs.addTab(self.why, "Why")
        self.tabs.addTab(self.debug, "Debug")
        self.tabs.addTab(self.ask, "Ask")
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(self.results)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 1)
        self.splitter.setSizes([220, 480, 500])
        self._add_room_and_editor_choice()
        search_page = QWidget(self)
        page_layout = QVBoxLayout(search_page)
        page_layout.setContentsMargins(0, 0, 0, 0)
        page_layout.addWidget(self.search_bar)
        page_layout.addWidget(self.splitter, 1)
        self.welcome = WelcomePanel(controller, self, sample_available=sample_vault is not None)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(search_page)
        self.setCentralWidget(self.stack)
        self.status = StatusPanel(controller, self)
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().setSizeGripEnabled(True)

        self._build_menus()
        self._wire()
        self._restore()
        self._show_page(bool(controller.vaults))

    # -- construction ----------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.add_action = file_menu.addAction("&Add folder…", self.choose_folder)
        self.add_action.setShortcut(QKeySequence.StandardKey.Open)
        self.sample_action = file_menu.addAction("Try the &sample vault", self.open_sample)
        self.sample_action.setEnabled(self._sample_vault is not None)
        file_menu.addAction("&Re-index all vaults", lambda: self.controller.index())
        file_menu.addAction("Index &health…", self.show_health)
        file_menu.addSeparator()
        self.settings_action = QAction("&Settings…", self)
        self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.settings_action.triggered.connect(self.show_settings)
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        quit_action = file_menu.addAction("&Quit", self.close)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        search_menu = self.menuBar().addMenu("&Search")
        focus = search_menu.addAction("&Find in notes", self.focus_search)
        focus.setShortcut(QKeySequence("Ctrl+K"))
        ask = search_menu.addAction("&Ask my notes", self.ask_shortcut)
        ask.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        search_menu.addSeparator()
        search_menu.addAction("&Tasks…", self.show_tasks)
        search_menu.addAction("Vault &check-up…", self.show_checkup)
        self.addActions([focus, ask, self.settings_action])
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        escape.setContext(Qt.ShortcutContext.WindowShortcut)
        escape.activated.connect(self.clear_search)

    def _add_room_and_editor_choice(self) -> None:
        """Wider and Pop out in the Ask pane's button row (desktop.panels.ask_room); a way out when "Open in editor" fails."""
        self.ask_room = AskRoom(self.ask, self.tabs, self.splitter, self)
        self.editor_choice = EditorChoice(self.controller, self)
        if self.controller.actions.on_editor_failure is None:
            self.controller.actions.on_editor_failure = self.editor_choice.failed
        for label, name, tip, slot in (
            ("⧉", "Pop out", "Pop out: ask in a window of its own; closing it puts the pane back in its tab", self.ask_room.toggle_detached),
            ("⇔", "Wider", "Wider: give this pane most of the window's width (again: back as it was)", self.ask_room.toggle_wide),
        ):
            button = QToolButton(self.ask)  # small: the pane must still fit a 720 px wide window
            button.setText(label)
            button.setAccessibleName(name)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            self.ask.button_row.insertWidget(1, button)

    def _wire(self) -> None:
        c = self.controller
        c.snapshotChanged.connect(self._on_snapshot)
        self.search_bar.navigateDown.connect(self.results.focus_results)
        self.tree.addRequested.connect(self.choose_folder)
        self.welcome.openFolderRequested.connect(self.choose_folder)
        self.welcome.sampleRequested.connect(self.open_sample)
        self.status.health.clicked.connect(self.show_health)
        self.ask.previewRequested.connect(self.show_in_preview)
        self.ask.linkClicked.connect(self.open_link)

    def _restore(self) -> None:
        store = self.controller.store
        geometry = store.window_state("geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1280, 800)
        splitter = store.window_state("splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)
        self.search_bar.query.setText(self.controller.settings.last_query)

    def save_layout(self) -> None:
        store = self.controller.store
        store.set_window_state("geometry", self.saveGeometry())
        store.set_window_state("splitter", self.splitter.saveState())
        self.controller.remember_query(self.search_bar.query.text())
        store.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed:
            self._closed = True
            self.save_layout()
            self.preview.links.shutdown()
            self._finish_background_work()
        super().closeEvent(event)

    def _finish_background_work(self) -> None:
        """Cancel indexing, stop the watcher and flush live changes to disk before the window goes.

        Runs a local event loop so the work stays off the GUI thread and the
        window keeps painting; a "Saving index…" note appears if it takes long.
        """
        loop = QEventLoop(self)
        self.controller.closeReady.connect(loop.quit)
        try:
            if self.controller.begin_close():
                return
            if (central := self.centralWidget()) is not None:
                central.setEnabled(False)
            self.menuBar().setEnabled(False)
            note = QTimer(loop)
            note.setSingleShot(True)
            note.timeout.connect(self._show_saving)
            note.start(SAVING_NOTE_AFTER_MS)
            give_up = QTimer(loop)
            give_up.setSingleShot(True)
            give_up.timeout.connect(loop.quit)
            give_up.start(CLOSE_GIVE_UP_MS)
            if not self.controller.closed:
                loop.exec()
            note.stop()
            give_up.stop()
        finally:
            self.controller.closeReady.disconnect(loop.quit)
            loop.deleteLater()
            if self.saving_dialog is not None:
                self.saving_dialog.close()

    def _show_saving(self) -> None:
        dialog = QProgressDialog("Saving index…", "", 0, 0, self)
        dialog.setWindowTitle("Cairn")
        dialog.setCancelButton(None)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAccessibleName("Saving the index before Cairn closes")
        dialog.show()
        self.saving_dialog = dialog

    # -- actions ---------------------------------------------------------------------------

    def _show_page(self, has_vaults: bool) -> None:
        self.stack.setCurrentIndex(1 if has_vaults else 0)

    def _on_snapshot(self, snapshots: tuple[VaultSnapshot, ...]) -> None:
        was_welcome = self.stack.currentIndex() == 0
        self._show_page(bool(self.controller.vaults))
        if was_welcome and self.controller.vaults:
            self.focus_search()

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a folder of markdown notes")
        if folder:
            self.add_vault(Path(folder))

    def add_vault(self, path: Path) -> None:
        if self.controller.add_vault(path) is not None:
            self._show_page(True)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        if dropped_folders(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        folders = dropped_folders(event.mimeData())
        if not folders:
            event.ignore()
            return
        event.acceptProposedAction()
        for folder in folders:
            self.add_vault(folder)

    def open_sample(self) -> None:
        if self._sample_vault is not None:
            self.add_vault(self._sample_vault)

    def focus_search(self) -> None:
        self.search_bar.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_bar.query.selectAll()

    def clear_search(self) -> None:
        self.search_bar.clear()
        self.focus_search()

    def ask_shortcut(self) -> None:
        """Ctrl+Enter: ask what is typed where the focus is (query box or question box), else go to the question."""
        if self.ask_room.window is not None:  # popped out: bring its window forward
            self.ask_room.window.raise_()
            self.ask_room.window.activateWindow()
        else:
            self.tabs.setCurrentWidget(self.ask)
        query = self.search_bar.query
        if query.hasFocus() and query.text().strip():
            self.ask.ask(query.text())
        elif self.ask.question.hasFocus() and self.ask.question.text().strip():
            self.ask.ask()
        else:
            self.ask.focus_question()

    def show_in_preview(self, hit: Hit, switch: bool) -> None:
        """A cited passage: show it in the Preview tab (and bring the tab forward when asked)."""
        self.preview.show_hit(hit)
        self.preview.scroll_to_chunk()  # asked for by a click: back to the passage even if it was shown already
        if switch:
            self.tabs.setCurrentWidget(self.preview)

    def open_link(self, url: QUrl) -> None:
        """A link in an answer: a note opens in the Preview tab, a web address in the browser (after asking)."""
        if self.preview.follow_link_anywhere(url):
            self.tabs.setCurrentWidget(self.preview)

    def show_settings(self) -> None:
        SettingsDialog(self.controller, self).exec()

    def show_tasks(self) -> None:
        from desktop.dialogs.tasks_dialog import TasksDialog

        _show_dialog(TasksDialog(self.controller, self))

    def show_checkup(self) -> None:
        from desktop.dialogs.checkup_dialog import CheckupDialog

        scope = self.controller.scope
        vault = scope.vault if scope else (self.controller.vaults[0].name if self.controller.vaults else None)
        if vault is None:
            self.statusBar().showMessage("Add a vault first: the check-up looks at one vault's notes")
            return
        _show_dialog(CheckupDialog(self.controller, vault, self))

    def show_health(self) -> None:
        dialog = IndexHealthDialog(self.controller, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()


def _show_dialog(dialog: QDialog) -> None:
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()


def dropped_folders(mime: QMimeData) -> list[Path]:
    """The local folders in a drag (files, web links and text are not vaults)."""
    paths = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]
    return [p for p in paths if p.is_dir()]
