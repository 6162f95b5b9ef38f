"""Why tab: how the selected hit got its score, exactly as the engine computed it.

Nothing is re-derived here: ranks, raw scores and every named term come from
the `Hit`, and the terms shown add up to the score shown.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.base.models import Hit, RankedScore, SearchResponse
from core.search.profiles import fusion_text
from desktop.controller import AppController
from desktop.formatting import filters_lines, heading_trail, score_text

ValueRole = Qt.ItemDataRole.UserRole + 1


class WhyPanel(QWidget):
    """The score breakdown of one hit: list ranks, raw scores, fusion terms, boosts, filters."""

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._controller = controller
        self.hit: Hit | None = None
        self.title = QLabel("Select a result to see why it matched.", self)
        self.title.setWordWrap(True)
        self.title.setAccessibleName("Explained result")
        self.bm25 = QLabel("—", self)
        self.bm25.setAccessibleName("Keyword (BM25) rank and score")
        self.vector = QLabel("—", self)
        self.vector.setAccessibleName("Vector rank and cosine similarity")
        self.mode = QLabel("—", self)
        self.mode.setAccessibleName("Search mode, profile and fusion")
        self.mode.setWordWrap(True)
        self.filters = QLabel("—", self)
        self.filters.setWordWrap(True)
        self.filters.setAccessibleName("Filters applied")
        form = QFormLayout()
        form.addRow("Keyword (BM25):", self.bm25)
        form.addRow("Vector:", self.vector)
        form.addRow("Mode:", self.mode)
        form.addRow("Filters:", self.filters)
        self.terms = ScoreTermsTable(self)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addLayout(form)
        layout.addWidget(QLabel("<b>How the score adds up</b>", self))
        layout.addWidget(self.terms, 1)
        layout.addWidget(self.note)
        controller.hitSelected.connect(self.show_hit)

    def show_hit(self, hit: Hit | None) -> None:
        self.hit = hit
        response = self._controller.response
        self.terms.setRowCount(0)
        if hit is None or response is None:
            self.title.setText("Select a result to see why it matched.")
            for label in (self.bm25, self.vector, self.mode, self.filters):
                label.setText("—")
            self.note.clear()
            return
        rank = response.hits.index(hit) + 1 if hit in response.hits else 0
        trail = heading_trail(hit.chunk.heading_path, hit.title)
        where = f" › {html.escape(trail)}" if trail else ""
        self.title.setText(f"<b>#{rank} {html.escape(hit.title)}</b>{where}")
        self.bm25.setText(_ranked(hit.bm25, "score", 3, response, "keyword"))
        self.vector.setText(_ranked(hit.vector, "cosine", 4, response, "vector"))
        mode = response.mode if response.mode == response.requested_mode else f"{response.mode} (asked for {response.requested_mode})"
        self.mode.setText(f"{mode}, profile “{response.profile}”, {fusion_text(response.settings, response.mode)}")
        filters = filters_lines(response.parsed.filters if response.parsed else None)
        self.filters.setText("<br>".join(html.escape(f) for f in filters) or "none")
        self.terms.add_hit(hit)
        total = sum(t.value for t in hit.contributions)
        note = []
        if abs(total - hit.score) > 1e-9:
            note.append(f"The terms add up to {score_text(total)}, not the score {score_text(hit.score)}.")
        if not hit.contributions:
            note.append("Filter-only browse: results are ordered by date, not scored.")
        note.extend(f"⚠ {w}" for w in response.warnings)
        self.note.setText("<br>".join(html.escape(n) for n in note))

    def term_values(self) -> list[tuple[str, float]]:
        """The table as (name, value) pairs, last row the score (what tests compare to the core)."""
        return self.terms.term_values()


class ScoreTermsTable(QTableWidget):
    """The named terms of a hit's score and the "= score" row they add up to.

    Shared by the Why tab and the Ask pane's sources, so a score reads the same everywhere.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 2, parent)
        self.setAccessibleName("Score terms")
        self.setHorizontalHeaderLabels(["Term", "Adds"])
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)

    def add_hit(self, hit: Hit) -> None:
        """One row per term as the engine named it, then the score in bold."""
        for term in hit.contributions:
            self.add_row(term.name, term.value)
        self.add_row("= score", hit.score, bold=True)

    def add_section(self, title: str) -> None:
        """A heading row spanning both columns (a source merges several chunks)."""
        row = self.rowCount()
        self.insertRow(row)
        item = QTableWidgetItem(title)
        font = QFont(self.font())
        font.setItalic(True)
        item.setFont(font)
        self.setItem(row, 0, item)
        self.setSpan(row, 0, 1, 2)

    def add_row(self, name: str, value: float, *, bold: bool = False) -> None:
        row = self.rowCount()
        self.insertRow(row)
        name_item = QTableWidgetItem(name)
        value_item = QTableWidgetItem(("+ " if not bold and value >= 0 else "") + score_text(value))
        value_item.setData(ValueRole, value)
        value_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if bold:
            font = QFont(self.font())
            font.setBold(True)
            name_item.setFont(font)
            value_item.setFont(font)
        self.setItem(row, 0, name_item)
        self.setItem(row, 1, value_item)

    def term_values(self) -> list[tuple[str, float]]:
        """(name, value) of every term and score row; section rows are left out."""
        out = []
        for row in range(self.rowCount()):
            name, value = self.item(row, 0), self.item(row, 1)
            if name is not None and value is not None:
                out.append((name.text(), float(value.data(ValueRole))))
        return out


def _ranked(rs: RankedScore | None, what: str, digits: int, response: SearchResponse, side: str) -> str:
    if rs is not None:
        return f"rank {rs.rank} of {_count(response, side)}, {what} {rs.score:.{digits}f}"
    if side == "vector" and response.mode == "keyword":
        return "not searched (keyword mode)"
    if side == "keyword" and response.mode == "semantic":
        return "not searched (semantic mode)"
    return "not a candidate in this list"


def _count(response: SearchResponse, side: str) -> int:
    return len(response.keyword_candidates if side == "keyword" else response.vector_candidates)
