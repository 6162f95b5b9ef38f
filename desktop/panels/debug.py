"""Debug tab: everything the last search did — both candidate lists, timings, parse, warnings."""

from __future__ import annotations

import json
from collections import Counter

from PySide6.QtGui import QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.base.models import Candidate, SearchResponse
from core.serialize import search_json
from desktop.controller import AppController
from desktop.formatting import chunk_label, filters_lines

COLUMNS = ("Item", "Rank", "Score", "Detail")


class DebugPanel(QWidget):
    """A tree with one section per stage of the newest search; shown as is, for the curious."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.response: SearchResponse | None = None
        self.tree = QTreeWidget(self)
        self.tree.setAccessibleName("Search debug details")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setAlternatingRowColors(True)
        header = self.tree.header()
        for col in (0, 1, 2):  # note paths are what users scan for: never elide them
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.copy_button = QPushButton("Copy as JSON", self)
        self.copy_button.setAccessibleName("Copy the search details as JSON")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self._copy)
        self.empty = QLabel("Run a search to see its details.", self)
        bar = QHBoxLayout()
        bar.addWidget(self.empty, 1)
        bar.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.tree, 1)
        controller.resultsReady.connect(self.show_response)
        controller.resultsCleared.connect(lambda: self.show_response(None))

    def show_response(self, response: SearchResponse | None) -> None:
        """Remember the response; build the tree only when the tab is on screen.

        Rebuilding 200 candidate rows costs 17–90 ms on the UI thread, on every
        keystroke's search, so a hidden Debug tab defers it to its showEvent.
        """
        self.response = response
        self._stale = True
        if self.isVisible():
            self._render()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if getattr(self, "_stale", False):
            self._render()

    def _render(self) -> None:
        self._stale = False
        response = self.response
        self.tree.clear()
        self.copy_button.setEnabled(response is not None)
        if response is None:
            self.empty.setText("Run a search to see its details.")
            return
        self.empty.setText(f"“{response.query}”")
        mode = self._section(f"Mode: {response.mode} (asked for {response.requested_mode}), profile {response.profile}")
        if response.mode != response.requested_mode:
            self._info(mode, f"fallback: {response.requested_mode} → {response.mode}")
        parsed = self._section("Parsed query")
        if response.parsed is not None:
            p = response.parsed
            self._info(parsed, f"free text: {p.text or '(none)'}")
            self._info(parsed, f"terms: {', '.join(p.terms) or '(none)'}")
            self._info(parsed, "phrases: " + (", ".join(f"“{x}”" for x in p.phrases) or "(none)"))
            for line in filters_lines(p.filters) or ["(no filters)"]:
                self._info(parsed, f"filter: {line}")
        timings = self._section("Timings (ms)", "", f"{response.timings_ms.get('total', 0.0):.1f}", "total", span=False)
        for stage, ms in response.timings_ms.items():
            if stage != "total":
                self._leaf(timings, stage, "", f"{ms:.2f}", "")
        warnings = self._section(f"Warnings ({len(response.warnings)})")
        for w in response.warnings:
            self._info(warnings, w)
        self._candidates("Keyword candidates (BM25)", response.keyword_candidates, 3)
        self._candidates("Vector candidates (cosine)", response.vector_candidates, 4)
        self._languages(response)
        for i in range(4):
            if (top := self.tree.topLevelItem(i)) is not None:
                top.setExpanded(True)

    def _languages(self, response: SearchResponse) -> None:
        """Each shown hit's detected language: why a stemmer matched or not, what `lang:` would keep."""
        counts = Counter(h.lang or "?" for h in response.hits)
        section = self._section("Languages of the results: " + (", ".join(f"{lang} × {n}" for lang, n in counts.most_common()) or "(none)"))
        for h in response.hits:
            self._leaf(section, f"{h.chunk.rel_path} #{h.chunk.ordinal}", "", "", h.lang or "?")

    def _candidates(self, title: str, candidates: tuple[Candidate, ...], digits: int) -> None:
        shown = {h.chunk.chunk_id for h in self.response.hits} if self.response else set()
        section = self._section(f"{title}: {len(candidates)}" + ("  (✓ = shown in the results)" if candidates else ""))
        for c in candidates:
            vault, rel, ordinal = chunk_label(c.chunk_id)
            mark = "✓ " if c.chunk_id in shown else ""
            self._leaf(section, f"{mark}{rel} #{ordinal}", str(c.rank), f"{c.score:.{digits}f}", vault)
        section.setExpanded(bool(candidates))

    def _section(self, *columns: str, span: bool = True) -> QTreeWidgetItem:
        item = QTreeWidgetItem(list(columns))
        font = item.font(0)
        font.setBold(True)
        item.setFont(0, font)
        self.tree.addTopLevelItem(item)
        item.setFirstColumnSpanned(span)
        return item

    @staticmethod
    def _info(parent: QTreeWidgetItem, text: str) -> QTreeWidgetItem:
        """A line of text across all columns (parsed query, warnings)."""
        item = QTreeWidgetItem([text])
        item.setToolTip(0, text)
        parent.addChild(item)
        item.setFirstColumnSpanned(True)
        return item

    @staticmethod
    def _leaf(parent: QTreeWidgetItem, *columns: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem(list(columns))
        parent.addChild(item)
        return item

    def candidates_shown(self, kind: str) -> list[tuple[str, int, float]]:
        """(chunk label, rank, score) rows of one candidate section, as displayed (used by tests)."""
        if getattr(self, "_stale", False):
            self._render()  # what the tab shows once it is opened
        index = 4 if kind == "keyword" else 5
        section = self.tree.topLevelItem(index)
        rows = []
        for i in range(section.childCount() if section else 0):
            item = section.child(i) if section else None
            if item is None:
                continue
            rows.append((item.text(0).removeprefix("✓ "), int(item.text(1)), float(item.text(2))))
        return rows

    def languages_shown(self) -> list[tuple[str, str]]:
        """(chunk label, language) rows of the languages section, as displayed (used by tests)."""
        if getattr(self, "_stale", False):
            self._render()
        section = self.tree.topLevelItem(6)
        if section is None:
            return []
        rows = [section.child(i) for i in range(section.childCount())]
        return [(row.text(0), row.text(3)) for row in rows if row is not None]

    def as_json(self) -> str:
        if self.response is None:
            return "{}"
        data = search_json(self.response)
        data["keyword_candidates"] = [["/".join(map(str, chunk_label(c.chunk_id))), c.rank, c.score] for c in self.response.keyword_candidates]
        data["vector_candidates"] = [["/".join(map(str, chunk_label(c.chunk_id))), c.rank, c.score] for c in self.response.vector_candidates]
        if self.response.parsed is not None:
            data["parsed"] = {"text": self.response.parsed.text, "terms": list(self.response.parsed.terms), "phrases": list(self.response.parsed.phrases)}
        return json.dumps(data, indent=2, ensure_ascii=False)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.as_json())
        self._controller.message.emit("Search details copied as JSON")
