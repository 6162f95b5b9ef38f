"""The controller's read side: what the query thread answers — vault snapshots and searches.

A part `AppController` holds (`controller.queries`) and relays. It stands apart because these reads follow rules of their
own that the rest of the controller (vaults, indexing, live updates, settings: the writes)
never needs: every search gets a sequence number and only the newest result is ever shown,
a re-run keeps the user's selected hit, the language model's rerank replaces the fused order
only while its query is still the one on screen, and a snapshot that shows another process
indexing a vault schedules a look again. Everything here runs on the GUI thread; the slow
calls go to one long-lived `QueryWorker` thread through queued signals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from core.base.models import Hit, SearchFilters, SearchResponse
from core.engine import Engine
from core.search.search import SearchRequest
from desktop.app_state import Lifecycle, Scope
from desktop.base_scope import base_rows, in_base_order
from desktop.rerank_worker import RerankRunner
from desktop.settings import Settings
from desktop.state import VaultSnapshot
from desktop.workers import QueryWorker, SearchJob

__all__ = ["ELSEWHERE_RETRY_MS", "QueryControl"]

ELSEWHERE_RETRY_MS = 3000  # how often the app looks again at a vault another process is indexing


class QueryControl(QObject):
    """Snapshots and searches on the query thread, with the newest-result-only rule.

    The owner passes how to read its current engine, settings and lifecycle; a search reads
    them when it starts, so a replaced engine or new settings apply from the next one on.
    `start` starts the query thread, `stop` ends it.
    """

    snapshotChanged = Signal(object)  # tuple[VaultSnapshot, ...]
    searchStarted = Signal(int)
    resultsReady = Signal(object)  # SearchResponse
    resultsCleared = Signal()
    searchFailed = Signal(str)
    hitSelected = Signal(object)  # Hit | None
    scopeChanged = Signal(object)  # Scope | None
    resultsOutdated = Signal()  # the index moved on under the shown results; they wait for a Refresh
    message = Signal(str)  # a sentence for the status line (the whole controller's, not only searches')
    _searchRequested = Signal(int, object)
    _snapshotRequested = Signal(object)

    def __init__(
        self,
        engine: Callable[[], Engine],
        settings: Callable[[], Settings],
        lifecycle: Callable[[], Lifecycle],
        reranks: RerankRunner,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._engine = engine
        self._settings = settings
        self._lifecycle = lifecycle
        self.reranks = reranks
        reranks.reranked.connect(self._on_reranked)
        reranks.failed.connect(self._on_rerank_failed)
        self.snapshot: tuple[VaultSnapshot, ...] = ()
        self._elsewhere_retry = False  # a look-again is scheduled (see `_on_snapshot`)
        self.scope: Scope | None = None
        self.response: SearchResponse | None = None
        self.selected: Hit | None = None
        self._seq = 0
        self._shown_seq = 0
        self.stale_dropped = 0
        self._last_search: tuple[str, str, SearchFilters] | None = None
        self.results_outdated = False  # newer results exist than the ones shown (see `hold_results`)
        # Whether a changed index leaves the shown results alone until the user asks (the controller:
        # while an index job runs, so arriving vectors do not reshuffle the list being read).
        self.hold_results: Callable[[], bool] = lambda: False
        self._base_order: list[str] | None = None  # rows of the Base in scope, in its order

    def start(self) -> None:
        """Start the query thread; searches and snapshots may be asked for from now on."""
        self._query_thread = QThread()
        self._query_thread.setObjectName("QueryWorker")
        self._query = QueryWorker(lambda: self._seq)
        self._query.moveToThread(self._query_thread)
        self._searchRequested.connect(self._query.search)
        self._snapshotRequested.connect(self._query.snapshot)
        self._query.searchDone.connect(self._on_search_done)
        self._query.searchFailed.connect(self._on_search_failed)
        self._query.snapshotReady.connect(self._on_snapshot)
        self._query.snapshotFailed.connect(self.rerun_search)
        self._query_thread.start()

    def stop(self) -> None:
        """End the query thread (waits for a search in progress)."""
        self._query_thread.quit()
        self._query_thread.wait(30000)

    # -- snapshots -------------------------------------------------------------------------

    def refresh(self) -> None:
        """Ask the query thread for a fresh snapshot; `snapshotChanged` follows."""
        self._snapshotRequested.emit(self._engine())

    @Slot(object)
    def _on_snapshot(self, snap: tuple[VaultSnapshot, ...]) -> None:
        self.snapshot = snap
        self.snapshotChanged.emit(snap)
        if self.hold_results():  # vectors arriving: the list the user reads stays put
            self.results_outdated = self._last_search is not None
            if self.results_outdated:
                self.resultsOutdated.emit()
        else:
            self.rerun_search()  # the index changed under the shown results
        if any(s.status.elsewhere for s in snap) and not self._elsewhere_retry and self._lifecycle() is Lifecycle.RUNNING:
            # Another Cairn process builds a vault's index: look again until it is done.
            self._elsewhere_retry = True
            QTimer.singleShot(ELSEWHERE_RETRY_MS, self, self._retry_elsewhere)

    def _retry_elsewhere(self) -> None:
        self._elsewhere_retry = False
        if self._lifecycle() is Lifecycle.RUNNING:
            self.refresh()

    def vault_snapshot(self, name: str) -> VaultSnapshot | None:
        return next((s for s in self.snapshot if s.name == name), None)

    # -- searching -------------------------------------------------------------------------

    def search(self, text: str, mode: str, filters: SearchFilters = SearchFilters()) -> int:
        """Start a search; returns its sequence number. Only the newest result is ever shown."""
        self._seq += 1
        self.results_outdated = False
        self.reranks.cancel()  # the running rerank is for an older query
        self._last_search = (text, mode, filters)
        self._base_order = None
        if self.scope is not None:
            folders = (self.scope.folder,) if self.scope.folder else ()
            filters = replace(filters, vaults=(self.scope.vault,), folders=folders + filters.folders)
            if self.scope.base:
                self._base_order = base_rows(self, self.scope)
                filters = replace(filters, paths=frozenset(self._base_order or ()))
            if self.scope.prefix:  # a dotted-name node of the tree
                filters = replace(filters, path_prefixes=(self.scope.prefix,))
        f = filters
        has_filter = bool(f.vaults or f.folders or f.path_prefixes or f.tags or f.doc_types or f.languages or f.after or f.before or f.where)
        has_filter = has_filter or f.paths is not None
        if not text.strip() and not has_filter:
            self._last_search = None
            self._shown_seq = self._seq
            self.response = None
            self.select_hit(None)
            self.resultsCleared.emit()
            return self._seq
        k = self._settings().results_k
        if self._base_order and not text.strip():  # a Base listed without a query: all its rows (up to 500)
            k = max(k, min(len(self._base_order), 500))
        request = SearchRequest(query=text, mode=mode, k=k, filters=filters, grouped=True)
        self.searchStarted.emit(self._seq)
        self._searchRequested.emit(self._seq, SearchJob(self._engine(), request))
        return self._seq

    def rerun_search(self) -> None:
        """Run the last query again (the index changed); the stale-result rules still apply."""
        if self._last_search is not None and self._lifecycle() is not Lifecycle.SHUT:
            self.search(*self._last_search)

    @Slot(int, object)
    def _on_search_done(self, seq: int, response: SearchResponse) -> None:
        if seq <= self._shown_seq:  # an older query finished late: never overwrite a newer one
            self.stale_dropped += 1
            return
        self._shown_seq = seq
        self._show(response)
        if seq == self._seq and self.reranks.start(seq, response):  # the fused order shows now, the new order later
            self.message.emit("Re-ranking the top 10 with the language model…")

    def _show(self, response: SearchResponse) -> None:
        if self._base_order and not response.query.strip():  # a Base with no query: its rows in its order
            response = in_base_order(response, self._base_order)
        self.response = response
        self.resultsReady.emit(response)
        previous = self.selected.chunk if self.selected is not None else None
        keep = next((h for h in response.hits if h.chunk == previous), None)  # re-runs keep the user's place
        self.select_hit(keep or (response.hits[0] if response.hits else None))

    @Slot(int, object)
    def _on_reranked(self, seq: int, response: SearchResponse) -> None:
        if seq != self._shown_seq or seq != self._seq:  # a newer query is on its way or shown
            return
        self._show(response)
        self.message.emit(f"Re-ranked by the language model in {response.timings_ms.get('llm_rerank', 0):.0f} ms")

    @Slot(int, str)
    def _on_rerank_failed(self, seq: int, message: str) -> None:
        if seq == self._shown_seq == self._seq:
            self.message.emit(message)

    @Slot(int, str)
    def _on_search_failed(self, seq: int, message: str) -> None:
        if seq <= self._shown_seq:
            return
        self._shown_seq = seq
        self.searchFailed.emit(message)

    def select_hit(self, hit: Hit | None) -> None:
        self.selected = hit
        self.hitSelected.emit(hit)

    def set_scope(self, scope: Scope | None) -> None:
        if scope != self.scope:
            self.scope = scope
            self.scopeChanged.emit(scope)
