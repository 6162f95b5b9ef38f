"""The two halves of an answer in the Ask pane: the text with clickable `[n]` chips, and its sources with their scores."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from PySide6.QtCore import QRegularExpression, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QFont, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.answer import Quote, Source
from desktop.answer_text import (
    MARKER,
    answer_body,
    passage_markdown,
    preview_hit,
    ranks_line,
    source_line,
    split_markers,
)
from desktop.formatting import heading_trail
from desktop.note_links import answer_links
from desktop.panels.why import ScoreTermsTable
from desktop.theme import colours

#: Streamed pieces are drawn at most this often; one model token per repaint would be wasteful.
RENDER_EVERY_MS = 40
CITE_SCHEME = "cite"
CLOSEST_SCHEME = "cairn-closest"  # a closest note of an abstention: cairn-closest:<index in response.related>
NumberRole = Qt.ItemDataRole.UserRole + 1
SCROLL_MIN_H = 44


class AnswerBrowser(QTextBrowser):
    """Shows an answer as markdown; each `[n]` is a link styled as a chip.

    Signals:
        citationClicked: The number of the source a chip points to.
        linkClicked: Any other link of the answer (a note link, a web address).
    """

    citationClicked = Signal(int)
    closestClicked = Signal(int)  # index into the shown abstention's closest notes
    linkClicked = Signal(QUrl)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Answer")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self._text = ""
        self._tips: Mapping[int, str] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RENDER_EVERY_MS)
        self._timer.timeout.connect(self._render)

    @property
    def answer_text(self) -> str:
        """The answer as received so far (before rendering)."""
        return self._text

    def clear_answer(self) -> None:
        self._timer.stop()
        self._text = ""
        self._tips = {}
        self.clear()

    def append_delta(self, delta: str) -> None:
        """Add a streamed piece; the view catches up within `RENDER_EVERY_MS`."""
        self._text += delta
        if not self._timer.isActive():
            self._timer.start()

    def set_answer(self, text: str, tips: Mapping[int, str] | None = None) -> None:
        """The final answer (citations checked by the core), with a tooltip per source number."""
        self._text = text
        self._tips = dict(tips or {})
        self._timer.stop()
        self._render()

    def set_message(self, title: str, detail: str, closest: Sequence[str] = ()) -> None:
        """A message instead of an answer (abstention); `closest` notes are links that open them."""
        self._timer.stop()
        self._text = ""
        links = "".join(f"<li><a href='{CLOSEST_SCHEME}:{i}'>{html.escape(label)}</a></li>" for i, label in enumerate(closest))
        self.setHtml(f"<h3>{html.escape(title)}</h3><p>{html.escape(detail).replace(chr(10), '<br>')}</p>" + (f"<ul>{links}</ul>" if links else ""))

    def _render(self) -> None:
        bar = self.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 4  # keep following the stream unless the user scrolled up
        self.setMarkdown(split_markers(answer_links(answer_body(self._text))))
        self._chip_citations(self.document())
        if follow:
            bar.setValue(bar.maximum())

    def _chip_citations(self, doc: QTextDocument) -> None:
        pattern = QRegularExpression(MARKER.pattern)
        chip = colours(self.palette())
        found = doc.find(pattern, 0)
        while not found.isNull():
            number = int(found.selectedText()[1:-1])
            fmt = QTextCharFormat()
            fmt.setAnchor(True)
            fmt.setAnchorHref(f"{CITE_SCHEME}:{number}")
            fmt.setBackground(chip.chip_bg)
            fmt.setForeground(chip.chip_fg)
            fmt.setFontWeight(QFont.Weight.DemiBold)
            tip = self._tips.get(number)
            if tip:
                fmt.setToolTip(f"{tip}\nClick to open it in Preview")
            found.mergeCharFormat(fmt)
            found = doc.find(pattern, found)

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == CITE_SCHEME and url.path().isdigit():
            self.citationClicked.emit(int(url.path()))
        elif url.scheme() == CLOSEST_SCHEME and url.path().isdigit():
            self.closestClicked.emit(int(url.path()))
        else:
            self.linkClicked.emit(url)


class SourcesView(QWidget):
    """The numbered sources of an answer, and why the selected one was chosen.

    Signals:
        previewRequested: (Hit covering the source, whether to switch to the Preview tab).
    """

    previewRequested = Signal(object, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._sources: dict[int, Source] = {}
        self._mode = "hybrid"
        self.list = QListWidget(self)
        self.list.setAccessibleName("Sources of the answer")
        self.list.setWordWrap(True)
        self.list.currentItemChanged.connect(self._on_current)
        self.list.itemActivated.connect(lambda item: self.open(int(item.data(NumberRole)), switch=True))
        self.why_title = QLabel("Select a source to see why it was chosen.", self)
        self.why_title.setWordWrap(True)
        self.why_title.setAccessibleName("Why this source")
        self.ranks = QLabel(self)
        self.ranks.setWordWrap(True)
        self.ranks.setAccessibleName("Retrieval ranks of this source")
        self.terms = ScoreTermsTable(self)
        # Small minimums: the Ask tab shares the window's height with the other tabs; these scroll.
        self.list.setMinimumHeight(SCROLL_MIN_H)
        self.terms.setMinimumHeight(SCROLL_MIN_H)
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel("<b>Sources</b> — double-click to open in Preview", top)
        heading.setWordWrap(True)  # beside the why: an unwrapped line set the pane's (and so the window's) minimum width
        top_layout.addWidget(heading)
        top_layout.addWidget(self.list, 1)
        why = QWidget(self)
        why_layout = QVBoxLayout(why)
        why_layout.setContentsMargins(0, 0, 0, 0)
        why_layout.addWidget(self.why_title)
        why_layout.addWidget(self.ranks)
        why_layout.addWidget(self.terms, 1)
        # Side by side: stacked, the two needed ~150 px of height the answer above them lacked.
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(top)
        self.splitter.addWidget(why)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

    def set_sources(self, sources: Sequence[Source], mode: str = "hybrid") -> None:
        """Show an answer's sources; `mode` is the search mode that found them (for the rank lines)."""
        self._mode = mode
        self.list.blockSignals(True)
        self.list.clear()
        self._sources = {s.number: s for s in sources}
        for source in sources:
            item = QListWidgetItem(source_line(source), self.list)
            item.setData(NumberRole, source.number)
            item.setToolTip(f"{source.vault}/{source.rel_path}")
        self.list.blockSignals(False)
        self._show_why(None)

    def source(self, number: int) -> Source | None:
        return self._sources.get(number)

    def lines(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def open(self, number: int, *, switch: bool) -> None:
        """Select source `number`, explain it, and show it in Preview (switching tabs when asked)."""
        source = self._sources.get(number)
        if source is None:
            return
        row = list(self._sources).index(number)
        self.list.blockSignals(True)
        self.list.setCurrentRow(row)
        self.list.blockSignals(False)
        self._show_why(source)
        self.previewRequested.emit(preview_hit(source), switch)

    def _on_current(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if item is not None:
            self.open(int(item.data(NumberRole)), switch=False)

    def _show_why(self, source: Source | None) -> None:
        self.terms.setRowCount(0)
        self.terms.clearSpans()
        if source is None:
            self.why_title.setText("Select a source to see why it was chosen.")
            self.ranks.clear()
            return
        trail = heading_trail(source.heading_path, source.title)
        chunks = "chunk" if len(source.hits) == 1 else f"{len(source.hits)} adjacent chunks"
        self.why_title.setText(f"<b>[{source.number}] {html.escape(source.title)}</b>" + (f" › {html.escape(trail)}" if trail else "") + f" — {chunks}")
        self.ranks.setText("<br>".join(html.escape(ranks_line(h, self._mode)) for h in source.hits))
        for hit in source.hits:
            if len(source.hits) > 1:
                self.terms.add_section(f"chunk {hit.chunk.ordinal}: {heading_trail(hit.chunk.heading_path, hit.title) or hit.title}")
            self.terms.add_hit(hit)


class PassageView(QTextBrowser):
    """The passage a citation points to, shown beside the answer so the answer stays on screen."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Cited passage")
        self.setOpenLinks(False)
        self.number: int | None = None
        self.show_hint()

    def show_hint(self) -> None:
        """No passage chosen: folded away, so the answer has the pane's whole width until a citation is clicked."""
        self.number = None
        self.setHtml("<p><i>Click a citation such as [1] to read the passage here, beside the answer.</i></p>")
        self.setVisible(False)

    def show_passage(self, source: Source, quotes: Sequence[Quote] = ()) -> None:
        """Source `n`: where it is, then the quoted passages (or the whole source when nothing was quoted)."""
        self.number = source.number
        self.setMarkdown(passage_markdown(source, quotes))
        self.setVisible(True)


def show_unverified(toggle: QAbstractButton, view: QTextBrowser, text: str) -> None:
    """A model's answer that cited nothing it could be checked against: folded away, never the answer."""
    view.setPlainText(text)
    toggle.setChecked(False)
    toggle.setVisible(bool(text))
    view.setVisible(False)
