"""A cold hybrid `cairn search` starts the model's side on a second thread.

A new `cairn search` process pays, one after the other, the keyword side (imports,
Whoosh, the search) and the vector side (onnxruntime and usearch imports, the model's
session). Most of the session's start is onnxruntime's own C++ work, which runs
without the GIL, so on a second core it overlaps the keyword side instead of
following it. The thread only warms what the search would load anyway: it returns
nothing and swallows its errors, and the search itself asks for the same embedder
and session afterwards, under the same locks, so an error is raised (or reported)
by the search exactly as without the thread; at worst it waits for the thread's load
to finish instead of loading itself.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator

from core.base.models import SearchMode
from core.engine import Engine
from core.search.search import SearchRequest

_log = logging.getLogger(__name__)

# How long a thread holding the GIL may keep a thread that asks for it waiting, while the model
# loads. The load's own steps between its GIL-free parts (a stat, a file read, importing the
# tokenizer) each wait that long for the main thread to hand the GIL over: 5 ms by default,
# ~15 such waits before the session even starts.
SWITCH_INTERVAL_S = 0.0005


def start_prefetch(engine: Engine, request: SearchRequest) -> threading.Thread | None:
    """Warm the vector side of `request` on a thread; None when it needs no model (keyword mode).

    The caller joins the thread before the process exits (a thread still inside
    onnxruntime at interpreter shutdown is not safe).
    """
    if SearchMode(request.mode) == SearchMode.KEYWORD:
        return None
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL_S))  # restored when the thread ends
    thread = threading.Thread(
        target=_prefetch, args=(engine, request, interval), name="cairn-search-prefetch", daemon=True
    )
    thread.start()
    return thread


def needs_model(engine: Engine, request: SearchRequest) -> bool:
    """Whether the search may embed its query: False only when every vault searched has its vector on disk."""
    if SearchMode(request.mode) == SearchMode.KEYWORD:
        return False
    try:
        for emb in _searched_embedders(engine, request):
            if emb is not None and not _cached(emb, request.query):
                return True
    except Exception:  # noqa: BLE001 - unsure: load as for a new query, and let the search report the problem
        _log.debug("search prefetch: model need unknown", exc_info=True)
        return True
    return False


def _prefetch(engine: Engine, request: SearchRequest, interval: float) -> None:
    try:
        for emb in _searched_embedders(engine, request):
            preload = getattr(emb, "preload_query_session", None)
            if callable(preload) and not _cached(emb, request.query):
                preload()  # a repeated query's vector is on disk: nothing to load then
    except Exception:  # noqa: BLE001 - a warm-up: the search meets and reports the same problem itself
        _log.debug("search prefetch failed", exc_info=True)
    finally:
        sys.setswitchinterval(interval)


def _searched_embedders(engine: Engine, request: SearchRequest) -> Iterator[object]:
    """The embedder of each vault the request searches (None for a vault without one)."""
    wanted = set(request.filters.vaults)
    for vc in engine.config.vaults:
        if not wanted or vc.name in wanted:
            yield engine.embedder_for(vc)


def _cached(emb: object, text: str) -> bool:
    """The query's vector is on disk already (a repeated query): then no session is needed."""
    from core.search.query_vectors import cached_on_disk

    model = getattr(emb, "model_hash", None)
    return isinstance(model, str) and cached_on_disk(model, text)
