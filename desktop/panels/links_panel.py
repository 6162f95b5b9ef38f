"""Under the Preview: the note's backlinks (with the linking line), unlinked mentions of its
title or aliases, and related notes with the reason each is there. Loaded off the GUI thread."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core.search.related import Backlink, NoteLinks, RelatedNote
from core.vault.display_text import unmarked
from desktop.controller import AppController
from desktop.workers import JobRunner, TaskWorker

_TARGET = Qt.ItemDataRole.UserRole  # (rel_path, line) of the note an item opens


class LinksPanel(QWidget):
    """Backlinks, unlinked mentions and related notes of the note in the Preview.

    Signals:
        openRequested: (vault, rel_path, anchor, line): show this note, at that line.
    """

    openRequested = Signal(str, str, str, int)
    loaded = Signal(object)  # NoteLinks, once shown (tests wait on it)

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self._jobs = JobRunner(self)
        self._wanted: tuple[str, str] | None = None
        self._running: tuple[str, str] | None = None
        self.result: NoteLinks | None = None
        self.note = QLabel("", self)
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Links status")
        self.tree = QTreeWidget(self)
        self.tree.setHeaderHidden(True)
        self.tree.setAccessibleName("Backlinks and related notes")
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.itemActivated.connect(self._activate)
        self.tree.itemClicked.connect(self._activate)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        controller.liveUpdated.connect(self._on_live)
        controller.indexFinished.connect(lambda _reports: self.refresh())
        self.show_note(None, None)

    def refresh(self) -> None:
        """Load the shown note's links again (notes changed on disk: backlinks may have moved)."""
        if self._wanted is not None:
            vault, rel = self._wanted
            self.result = None
            self._wanted = None
            self.show_note(vault, rel)

    def _on_live(self, update: object) -> None:
        if self._wanted is not None and getattr(update, "vault", None) == self._wanted[0]:
            self.refresh()

    def show_note(self, vault: str | None, rel_path: str | None) -> None:
        """Load the links of this note (None: clear). A newer request replaces a pending one."""
        if vault is None or rel_path is None:
            self._wanted = None
            self.result = None
            self.tree.clear()
            self.note.setText("Backlinks and related notes of the previewed note appear here.")
            return
        if self._wanted == (vault, rel_path) and (self.result is not None or self._running == self._wanted):
            return
        self._wanted = (vault, rel_path)
        self.note.setText("Finding links…")
        if self._running is None:
            self._start()

    def shutdown(self) -> None:
        self._jobs.wait_all()

    def _start(self) -> None:
        if self._wanted is None:
            return
        vault, rel = self._running = self._wanted
        engine = self._controller.engine
        worker = TaskWorker(f"{vault}\x1f{rel}", lambda: engine.links(vault, rel, k=10))
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        self._jobs.start(worker)

    def _on_finished(self, tag: str, result: NoteLinks) -> None:
        self._running = None
        if self._wanted is None or tag != "\x1f".join(self._wanted):
            self._start()  # another note was asked for meanwhile
            return
        self.result = result
        self._fill(result)
        self.loaded.emit(result)

    def _on_failed(self, tag: str, message: str) -> None:
        self._running = None
        if self._wanted is not None and tag == "\x1f".join(self._wanted):
            self.result = None
            self.tree.clear()
            self.note.setText(f"Links unavailable: {message}")
        else:
            self._start()

    def _fill(self, nl: NoteLinks) -> None:
        self.tree.clear()
        dead = sum(1 for o in nl.outgoing if o.rel_path is None and not o.attachment)
        parts = [f"{len(nl.outgoing)} links out" + (f" ({dead} to notes that do not exist yet)" if dead else "")]
        if nl.semantic_note:
            parts.append(nl.semantic_note)
        self.note.setText("; ".join(parts))
        self._group(f"Backlinks ({len(nl.backlinks)})", [self._backlink(b) for b in nl.backlinks], expanded=True)
        self._group(f"Unlinked mentions ({len(nl.mentions)})", [self._backlink(b) for b in nl.mentions], expanded=False)
        names = distinct_names([(r.title, r.rel_path) for r in nl.related])
        self._group(f"Related notes ({len(nl.related)})", [self._related(r, n) for r, n in zip(nl.related, names)], expanded=True)

    def _group(self, title: str, children: list[QTreeWidgetItem], *, expanded: bool) -> None:
        top = QTreeWidgetItem([title])
        font = top.font(0)
        font.setBold(True)
        top.setFont(0, font)
        top.addChildren(children)
        self.tree.addTopLevelItem(top)
        top.setExpanded(expanded and bool(children))

    def _backlink(self, b: Backlink) -> QTreeWidgetItem:
        item = QTreeWidgetItem([f"{b.title} — {unmarked(b.context)}"])  # as read; a plain row shows code as text
        item.setToolTip(0, f"{b.rel_path}, line {b.line}\n{b.context}")
        item.setData(0, _TARGET, (b.rel_path, b.line))
        return item

    def _related(self, r: RelatedNote, name: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem([f"{name} — {'; '.join(r.reasons)}"])
        item.setToolTip(0, f"{r.rel_path}\nscore {r.score:.3f}")
        item.setData(0, _TARGET, (r.rel_path, 0))
        return item

    def _activate(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        target = item.data(0, _TARGET)
        if target and self.result is not None:
            rel, line = target
            self.openRequested.emit(self.result.vault, rel, "", int(line))


def distinct_names(notes: list[tuple[str, str]]) -> list[str]:
    """Titles, with the folder added where two listed notes share a title.

    Vaults often hold one page per language or per project under the same title (tldr's
    `pages.de/common/tar.md` beside `pages/common/tar.md`); without the folder such rows
    read as the same note listed twice.
    """
    counts: dict[str, int] = {}
    for title, _ in notes:
        counts[title.casefold()] = counts.get(title.casefold(), 0) + 1
    names = []
    for title, rel in notes:
        folder = rel.rpartition("/")[0]
        names.append(f"{title} ({folder or 'vault root'})" if counts[title.casefold()] > 1 else title)
    return names
