"""Debug tab: everything the last search did — both candidate lists, timings, parse, warnings — and the last question's routing."""

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

from core.answer import AskResponse
from core.base.models import Candidate, SearchResponse
from core.serialize import search_json
from desktop.controller import AppController
from desktop.formatting import chunk_label, filters_lines
from desktop.panels.debug_ask import ask_json, fill_ask_section

EMPTY = "Run a search or ask a question to see its details."

COLUMNS = ("Item", "Rank", "Score", "Detail")


class DebugPanel(QWidget):
    """A tree with one section per stage of the newest search; shown as is, for the curious."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.response: SearchResponse | None = None
        self.ask_response: AskResponse | None = None
        self._ask_newer = False  # the newest of the two is shown on top
        self._sections: dict[str, QTreeWidgetItem] = {}
        self.routing_item: QTreeWidgetItem | None = None
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
        self.empty = QLabel(EMPTY, self)
        bar = QHBoxLayout()
        bar.addWidget(self.empty, 1)
        bar.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.tree, 1)
        controller.resultsReady.connect(self.show_response)
        controller.resultsCleared.connect(lambda: self.show_response(None))
        controller.asks.finished.connect(self.show_ask)

    def show_response(self, response: SearchResponse | None) -> None:
        """Remember the response; build the tree only when the tab is on screen.

        Rebuilding 200 candidate rows costs 17–90 ms on the UI thread, on every
        keystroke's search, so a hidden Debug tab defers it to its showEvent.
        """
        self.response = response
        self._ask_newer = False
        self._refresh()

    def show_ask(self, response: AskResponse) -> None:
        """Remember the newest question's response (its folder routing above all); shown on top until the next search."""
        self.ask_response = response
        self._ask_newer = True
        self._refresh()

    def _refresh(self) -> None:
        self._stale = True
        if self.isVisible():
            self._render()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if getattr(self, "_stale", False):
            self._render()

    def _render(self) -> None:
        self._stale = False
        self.tree.clear()
        self._sections = {}
        self.routing_item = None
        response, asked = self.response, self.ask_response
        self.copy_button.setEnabled(response is not None or asked is not None)
        ask_first = asked is not None and (self._ask_newer or response is None)
        if ask_first and asked is not None:
            self._ask_section(asked)
        if response is not None:
            self._search_sections(response)
        if not ask_first and asked is not None:
            self._ask_section(asked)
        newest = asked.question if ask_first and asked is not None else response.query if response is not None else None
        self.empty.setText(EMPTY if newest is None else f"“{newest}”")

    def _ask_section(self, asked: AskResponse) -> None:
        section = self._section(f"Question: “{asked.question}”", key="ask")
        self.routing_item = fill_ask_section(section, asked)
        section.setExpanded(self._ask_newer or self.response is None)

    def _search_sections(self, response: SearchResponse) -> None:
        mode = self._section(f"Mode: {response.mode} (asked for {response.requested_mode}), profile {response.profile}", key="mode")
        if response.mode != response.requested_mode:
            self._info(mode, f"fallback: {response.requested_mode} → {response.mode}")
        parsed = self._section("Parsed query", key="parsed")
        if response.parsed is not None:
            p = response.parsed
            self._info(parsed, f"free text: {p.text or '(none)'}")
            self._info(parsed, f"terms: {', '.join(p.terms) or '(none)'}")
            self._info(parsed, "phrases: " + (", ".join(f"“{x}”" for x in p.phrases) or "(none)"))
            for line in filters_lines(p.filters) or ["(no filters)"]:
                self._info(parsed, f"filter: {line}")
        timings = self._section("Timings (ms)", "", f"{response.timings_ms.get('total', 0.0):.1f}", "total", span=False, key="timings")
        for stage, ms in response.timings_ms.items():
            if stage != "total":
                self._leaf(timings, stage, "", f"{ms:.2f}", "")
        warnings = self._section(f"Warnings ({len(response.warnings)})", key="warnings")
        for w in response.warnings:
            self._info(warnings, w)
        self._candidates("Keyword candidates (BM25)", response.keyword_candidates, 3, "keyword")
        self._candidates("Vector candidates (cosine)", response.vector_candidates, 4, "vector")
        self._languages(response)
        for key in ("mode", "parsed", "timings", "warnings"):
            self._sections[key].setExpanded(True)

    def _languages(self, response: SearchResponse) -> None:
        """Each shown hit's detected language: why a stemmer matched or not, what `lang:` would keep."""
        counts = Counter(h.lang or "?" for h in response.hits)
        section = self._section("Languages of the results: " + (", ".join(f"{lang} × {n}" for lang, n in counts.most_common()) or "(none)"), key="languages")
        for h in response.hits:
            self._leaf(section, f"{h.chunk.rel_path} #{h.chunk.ordinal}", "", "", h.lang or "?")

    def _candidates(self, title: str, candidates: tuple[Candidate, ...], digits: int, key: str) -> None:
        shown = {h.chunk.chunk_id for h in self.response.hits} if self.response else set()
        section = self._section(f"{title}: {len(candidates)}" + ("  (✓ = shown in the results)" if candidates else ""), key=key)
        for c in candidates:
            vault, rel, ordinal = chunk_label(c.chunk_id)
            mark = "✓ " if c.chunk_id in shown else ""
            self._leaf(section, f"{mark}{rel} #{ordinal}", str(c.rank), f"{c.score:.{digits}f}", vault)
        section.setExpanded(bool(candidates))

    def _section(self, *columns: str, span: bool = True, key: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem(list(columns))
        self._sections[key] = item
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
        section = self._sections.get(kind)
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
        section = self._sections.get("languages")
        if section is None:
            return []
        rows = [section.child(i) for i in range(section.childCount())]
        return [(row.text(0), row.text(3)) for row in rows if row is not None]

    def routing_shown(self) -> tuple[str, list[tuple[str, ...]], list[str]]:
        """The folder-routing row as displayed: (its title, folder rows, note lines); used by tests."""
        if getattr(self, "_stale", False):
            self._render()
        item = self.routing_item
        if item is None:
            return "", [], []
        children = [c for c in (item.child(i) for i in range(item.childCount())) if c is not None]
        rows = [tuple(c.text(col) for col in range(4)) for c in children if not c.isFirstColumnSpanned()]
        notes = [c.text(0) for c in children if c.isFirstColumnSpanned()]
        return item.text(0), rows, notes

    def as_json(self) -> str:
        data: dict[str, object] = {}
        if self.response is not None:
            data = search_json(self.response)
            data["keyword_candidates"] = [["/".join(map(str, chunk_label(c.chunk_id))), c.rank, c.score] for c in self.response.keyword_candidates]
            data["vector_candidates"] = [["/".join(map(str, chunk_label(c.chunk_id))), c.rank, c.score] for c in self.response.vector_candidates]
            if self.response.parsed is not None:
                data["parsed"] = {"text": self.response.parsed.text, "terms": list(self.response.parsed.terms), "phrases": list(self.response.parsed.phrases)}
        if self.ask_response is not None:
            data["ask"] = ask_json(self.ask_response)
        return json.dumps(data, indent=2, ensure_ascii=False)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.as_json())
        self._controller.message.emit("Search details copied as JSON")
