"""The one object views talk to: it owns the engine, the workers and the app's state.

Views receive the controller and connect to its signals (napari's `QtDims(dims)` pattern). Every signal
here is emitted on the GUI thread, so tests can wait on them safely and views can update widgets from any slot.

This module holds the writes and the app's life: the vaults, indexing, live updates,
settings (which may replace the engine) and closing. The reads the query thread answers
— vault snapshots and searches, with their newest-result-only rule and the rerank — are
a `desktop.query_control.QueryControl` the controller holds (`self.queries`) and relays.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.base.config import EngineConfig, VaultConfig
from core.base.delegated import Delegated
from core.base.errors import CairnError
from core.base.gc_pause import thaw_frozen
from core.base.models import Hit, SearchFilters, SearchResponse
from core.base.paths import AppPaths
from core.engine import Engine
from core.providers.secrets import KeyStore
from core.watcher import LiveUpdate
from desktop.actions import HitActions
from desktop.agent_server import AgentServerControl
from desktop.app_state import Lifecycle, Scope, follow_app_model, vaults_changed_message
from desktop.ask_worker import AskRunner, ProviderFactory
from desktop.config_watch import ConfigWatch
from desktop.connection_tests import ConnectionTester
from desktop.live import LiveIndexing
from desktop.live_watch import LiveWatch
from desktop.progress_board import ProgressBoard
from desktop.query_control import QueryControl
from desktop.rerank_worker import RerankRunner
from desktop.services import chat_provider_for, make_embedder_factory
from desktop.settings import Settings, SettingsStore
from desktop.state import VaultSnapshot
from desktop.workers import IndexWorker, JobRunner

__all__ = ["AppController", "Lifecycle", "Scope"]

_DEFAULT = object()


class AppController(QObject):
    """Owns the engine and runs every slow call on a worker thread.

    Args:
        paths: Where the engine keeps its data.
        store: Where the app's preferences live (a private file in tests).
        keys: The key store; its session-only keys reach the embedder factory.
        embedder_factory: Passed to the engine; `None` turns semantic search off
            (fast tests), the default builds the app's consent-checking factory.
        chat_provider_factory: Builds the Ask pane's chat model from the settings
            (tests pass a scripted one); the default reads the Language model page.
        parent: Qt parent.
    """

    #: Pass as `embedder_factory` to get the app's own consent-checking factory (the default).
    DEFAULT_FACTORY = _DEFAULT

    # Relayed from `self.queries` (desktop.query_control), so views connect to the controller alone.
    snapshotChanged = Signal(object)  # tuple[VaultSnapshot, ...]
    searchStarted = Signal(int)
    resultsReady = Signal(object)  # SearchResponse
    resultsCleared = Signal()
    searchFailed = Signal(str)
    hitSelected = Signal(object)  # Hit | None
    scopeChanged = Signal(object)  # Scope | None
    message = Signal(str)  # a sentence for the status line
    resultsOutdated = Signal()  # newer results wait for a Refresh (an index job runs)
    indexStarted = Signal(object)  # list[str]
    indexProgress = Signal(str, int, int, str)
    indexFinished = Signal(object)  # list[SyncReport]
    indexFailed = Signal(str)
    settingsChanged = Signal(object)  # Settings
    connectionTested = Signal(str, bool, str)  # kind, ok, message
    liveUpdated = Signal(object)  # core.watcher.LiveUpdate
    watchingChanged = Signal(object)  # tuple[str, ...]: the vaults followed live
    closeReady = Signal()  # begin_close() is done: indexing stopped, watcher stopped, indexes flushed

    def __init__(
        self,
        paths: AppPaths,
        store: SettingsStore,
        keys: KeyStore | None = None,
        *,
        embedder_factory: object = _DEFAULT,
        actions: HitActions | None = None,
        chat_provider_factory: ProviderFactory | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.paths = paths
        self.store = store
        self.keys = keys if keys is not None else KeyStore()
        self.settings = store.load()
        self.actions = actions if actions is not None else HitActions()
        if self.actions.on_failure is None:
            self.actions.on_failure = self.message.emit  # a failed open is said in the window
        if embedder_factory is _DEFAULT:
            embedder_factory = make_embedder_factory(self.keys, lambda: self.settings.allow_remote_embedding)
        self._embedder_factory = embedder_factory
        self.engine = Engine(paths, embedder_factory=embedder_factory)  # type: ignore[arg-type]
        self._jobs = JobRunner(self)
        self._index_thread: QThread | None = None
        self._cancel = threading.Event()
        self._queued_index: list[str] = []
        self._pending_config: EngineConfig | None = None
        self.lifecycle = Lifecycle.RUNNING
        self._close_token: int | None = None  # the live stop whose end finishes closing
        if chat_provider_factory is None:
            chat_provider_factory = lambda settings: chat_provider_for(settings, self.keys)  # noqa: E731
        self.asks = AskRunner(lambda: self.engine, lambda: self.settings, chat_provider_factory, self)
        self.reranks = RerankRunner(lambda: self.settings, chat_provider_factory, self)
        self.queries = QueryControl(lambda: self.engine, lambda: self.settings, lambda: self.lifecycle, self.reranks, self)
        relayed_signals = ("snapshotChanged", "searchStarted", "resultsReady", "resultsCleared", "searchFailed", "hitSelected", "scopeChanged")
        for relayed in (*relayed_signals, "message", "resultsOutdated"):
            getattr(self.queries, relayed).connect(getattr(self, relayed))
        self.queries.hold_results = lambda: self.is_indexing() and bool(self.response and self.response.hits)
        self.queries.start()
        self.board = ProgressBoard(self)  # each vault's phase and percentage, for every view
        self.board.follow(self)
        self.live = LiveIndexing(self)
        self.live_watch = LiveWatch(self.live, self.board, self)
        self.live.updated.connect(self._on_live_update)
        self.live_watch.message.connect(self.message)
        self.live_watch.changed.connect(self._on_live_changed)
        self.live.watchingChanged.connect(self.watchingChanged)
        self.live.stopped.connect(self._on_live_stopped)
        self.connections = ConnectionTester(self.keys, self._jobs, self)
        self.connections.tested.connect(self.connectionTested)
        self.config_watch = ConfigWatch(paths.config_file, self)
        self.config_watch.changed.connect(self.reload_config)
        self.agents = AgentServerControl(paths, lambda: self.engine, self)  # the shared MCP server, off by default
        self.agents.failed.connect(lambda why: self.message.emit(f"Agents server: {why}"))
        if self.settings.agents_server:
            self.agents.start(self.settings.agents_port)

    # -- what the query thread answers (see desktop.query_control) --------------------------

    snapshot: Delegated[tuple[VaultSnapshot, ...]] = Delegated("queries", doc="The vaults as the last snapshot showed them.")
    scope: Delegated[Scope | None] = Delegated("queries", doc="The vault or folder the search is limited to, if any.")
    response: Delegated[SearchResponse | None] = Delegated("queries", doc="The search response on screen.")
    selected: Delegated[Hit | None] = Delegated("queries", doc="The hit on screen.")
    stale_dropped: Delegated[int] = Delegated("queries", doc="Late answers to older queries, dropped.")

    refresh: Delegated[Callable[[], None]] = Delegated("queries", doc="Ask for a fresh snapshot; snapshotChanged follows.")
    vault_snapshot: Delegated[Callable[[str], VaultSnapshot | None]] = Delegated("queries")
    rerun_search: Delegated[Callable[[], None]] = Delegated("queries", doc="Run the shown query again (the index changed).")
    select_hit: Delegated[Callable[[Hit | None], None]] = Delegated("queries")
    set_scope: Delegated[Callable[[Scope | None], None]] = Delegated("queries")

    def search(self, text: str, mode: str, filters: SearchFilters = SearchFilters()) -> int:
        return self.queries.search(text, mode, filters)

    def remember_query(self, text: str) -> None:
        self.settings = replace(self.settings, last_query=text)
        self.store.save_last_query(text)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Closing finished (or was never needed): the window may go."""
        return self.lifecycle in (Lifecycle.CLOSED, Lifecycle.SHUT)

    @property
    def running(self) -> bool:
        return self.lifecycle is Lifecycle.RUNNING

    def shutdown(self) -> None:
        """Cancel indexing and stop every thread, flushing live changes; safe to call twice."""
        if self.lifecycle is Lifecycle.SHUT:
            return
        self.lifecycle = Lifecycle.SHUT
        self._cancel.set()
        self.agents.shutdown()  # before the engine closes: calls in flight finish first
        self.asks.shutdown()
        self.reranks.shutdown()
        self.config_watch.stop()
        self._queued_index.clear()
        self._jobs.wait_all()
        self._index_thread = None
        self.queries.stop()
        if self._pending_config is not None:  # keep the user's new settings even though nothing re-indexes now
            self.engine.update_config(self._pending_config)
            self._pending_config = None
        self.live.shutdown(self.engine)
        self.store.sync()
        self.engine.close()

    def begin_close(self) -> bool:
        """Start closing: cancel indexing, then stop watching and flush on the watcher's thread.

        Returns True when there is nothing to wait for; otherwise `closeReady`
        follows (always later, from the event loop).
        """
        if self.closed:
            return True
        if self.running:
            self.lifecycle = Lifecycle.CLOSING
            self.asks.stop()
            self.reranks.cancel()
            self._queued_index.clear()
            if self.is_indexing():
                self._cancel.set()  # `_on_index_finished` carries on
            else:
                self._continue_close()
        return False

    def _continue_close(self) -> None:
        if self._pending_config is not None:
            self.engine.update_config(self._pending_config)
            self._pending_config = None
        self._close_token = self.live.stop(self.engine, flush=True)

    # -- vaults ----------------------------------------------------------------------------

    @Slot()
    def reload_config(self) -> None:
        """Show vaults another process registered (or removed) since; nothing is dropped or re-indexed.

        The process that registered a vault indexes it; this app watches it and shows
        it as soon as its index exists.
        """
        if not self.running:
            return
        before = {v.name for v in self.vaults}
        try:
            changed = self.engine.reload_config()
        except CairnError as exc:
            self.message.emit(str(exc))
            return
        if self.engine.config_problem:
            self.message.emit(self.engine.config_problem)
        if not changed:
            return
        after = {v.name for v in self.vaults}
        gone = before - after
        self.message.emit(vaults_changed_message(before, after))
        if self.scope is not None and self.scope.vault in gone:
            self.set_scope(None)
        self.refresh()
        self._sync_watch()

    @property
    def vaults(self) -> tuple[VaultConfig, ...]:
        return self.engine.vaults

    def add_vault(self, root: Path) -> VaultConfig | None:
        try:
            vc = self.engine.add_vault(root)
        except CairnError as exc:
            self.message.emit(str(exc))
            return None
        self.refresh()
        self.index([vc.name])
        return vc

    def remove_vault(self, name: str) -> None:
        if self.is_indexing():
            self.message.emit("Wait for indexing to finish (or cancel it) before removing a vault")
            return
        self.engine.remove_vault(name)  # waits for a live update of that vault to finish
        if self.scope is not None and self.scope.vault == name:
            self.set_scope(None)
        self.refresh()
        self._sync_watch()

    # -- indexing --------------------------------------------------------------------------

    def is_indexing(self) -> bool:
        return self._index_thread is not None

    def index(self, names: Sequence[str] | None = None, *, keyword: bool = True) -> None:
        """Index these vaults (all by default; `keyword` False: embeddings only); a request during a run waits for it."""
        names = list(names) if names else [v.name for v in self.vaults]
        if not names:
            return
        if self.is_indexing():
            self._queued_index.extend(n for n in names if n not in self._queued_index)
            return
        self._cancel = threading.Event()
        worker = IndexWorker(self.engine, names, self._cancel, embed=self._embedder_factory is not None, keyword=keyword)
        worker.progress.connect(self.indexProgress)
        worker.keywordReady.connect(self._on_keyword_ready)
        worker.failed.connect(self.indexFailed)
        worker.finished.connect(self._on_index_finished)
        self._index_thread = self._jobs.start(worker)
        self.indexStarted.emit(names)
        self._sync_watch()  # a vault is live from the moment it is added, not after its first index

    def resume_embedding(self) -> None:
        """Finish what a Cancel left part-way: embeddings only where the notes were all read, else the rest of them."""
        self.board.resume(self.index)

    def cancel_index(self) -> None:
        self._queued_index.clear()
        self._cancel.set()

    @Slot(str)
    def _on_keyword_ready(self, name: str) -> None:
        self.refresh()

    @Slot(object)
    def _on_index_finished(self, reports: list) -> None:
        self._index_thread = None
        self.indexFinished.emit(reports)
        if self.lifecycle is Lifecycle.CLOSING:
            self._continue_close()
            return
        if self._pending_config is not None:
            config, self._pending_config = self._pending_config, None
            self._replace_engine(config)
            return
        self.refresh()
        if self._queued_index:
            names, self._queued_index = self._queued_index, []
            self.index(names)
            return
        self._sync_watch()

    # -- live indexing ---------------------------------------------------------------------

    @property
    def watched(self) -> tuple[str, ...]:
        """The vaults whose edits are followed live right now."""
        return self.live.watched

    def _sync_watch(self) -> None:
        """Follow every vault of the current engine live, from the moment it is added.

        Indexing does not wait for this or stop it: the watcher queues a vault's events
        until its keyword index exists, then catches it up with its folder.
        """
        if self.running and self._pending_config is None:
            self.live.watch(self.engine, [v.name for v in self.vaults], self.settings.live_debounce_ms / 1000)

    @Slot(object)
    def _on_live_update(self, update: LiveUpdate) -> None:
        if self.running:
            self.liveUpdated.emit(update)

    @Slot(object)
    def _on_live_changed(self, _update: LiveUpdate) -> None:
        if self.running:
            self.refresh()  # tree counts and tags; the shown query then runs again (`_on_snapshot`)

    @Slot(int)
    def _on_live_stopped(self, token: int) -> None:
        if self.lifecycle is Lifecycle.CLOSING:
            if token == self._close_token:
                self.lifecycle = Lifecycle.CLOSED
                self.closeReady.emit()
            return
        if self.running and self._pending_config is not None and not self.is_indexing() and not self.live.active:
            config, self._pending_config = self._pending_config, None
            self._replace_engine(config)

    # -- settings --------------------------------------------------------------------------

    def apply_settings(self, settings: Settings, config: EngineConfig) -> None:
        """Save the app's preferences; when the engine's configuration changed, rebuild and re-index."""
        old = self.settings
        self.settings = settings
        self.store.save(settings)
        config = follow_app_model(config, old, settings)  # the Settings model is every vault's but those given their own
        self.settingsChanged.emit(settings)
        if settings.live_debounce_ms != old.live_debounce_ms:
            self.live.set_debounce(settings.live_debounce_ms / 1000)
        consent_changed = old.allow_remote_embedding != settings.allow_remote_embedding
        if config == self.engine.config and not consent_changed:
            return
        if self.is_indexing():
            self._pending_config = config
            self.cancel_index()
            self.message.emit("Settings changed: indexing restarts with the new settings")
        else:
            self._replace_engine(config)

    def _replace_engine(self, config: EngineConfig) -> None:
        """A fresh engine: cached indexes and embedders were built from the old configuration."""
        if self.live.active:  # the old engine's watcher stops and flushes first: one writer per index
            self._pending_config = config
            self.live.stop(self.engine, flush=True)
            return
        self.engine.update_config(config)
        config = self.engine.config  # with the vaults other processes registered meanwhile
        thaw_frozen()  # not closed (a search may still use it), but its frozen cycles can go once dropped (core.base.gc_pause)
        self.engine = Engine(self.paths, config, embedder_factory=self._embedder_factory)  # type: ignore[arg-type]
        self.refresh()
        self.index()
