"""Keeping Python's cyclic garbage collector out of the way: paused around bulk work that makes many
objects and no cycles, and kept off the loaded indexes in a long-running process (`HeapFreezer`)."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(active: bool = True) -> Iterator[None]:
    """No cyclic collection inside the block (when `active`); as it was before, after it.

    Building many small objects that form no cycles (index records, posting tuples) triggers
    full collections over the whole heap, each one C call that holds the GIL: tens of ms of a
    window's stall at 10k notes, ~8 % of a cold index's writer time. Reference counting still
    frees everything; the collector runs again after, also when the block raises.
    """
    was_enabled = gc.isenabled()
    if active:
        gc.disable()
    try:
        yield
    finally:
        if active and was_enabled:
            gc.enable()


class HeapFreezer:
    """Keeps full (generation 2) GC passes short in a long-running process that loads big indexes.

    A full pass walks every tracked object and holds the GIL throughout: after a 10k-note vault,
    links and Ask are loaded that is ~190k objects, 170 ms of CPU on a quiet core and seconds of
    wall time on a busy one, during which the UI thread cannot run (docs/benchmarks.md, "Many
    agents on one server"). Objects that survive a full pass are the loaded indexes, caches and
    modules: long-lived. So when a full pass took more than `slow_ms` of CPU, its survivors are moved
    to the permanent generation (`gc.freeze`) right after it; later passes walk only what came
    after. Once frozen, passes are fast and nothing more is frozen: it happens once per load.

    Reference counting still frees frozen objects; only a frozen *cycle* that dies is kept.
    `thaw()` (when an engine is replaced) gives those back to the collector: the next full pass is
    slow once, and its survivors are frozen again.
    """

    def __init__(self, slow_ms: float = 20.0) -> None:
        self.slow_ms = slow_ms
        self.freezes = 0
        self._started = 0.0

    def install(self) -> HeapFreezer:
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)
        return self

    def uninstall(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def thaw(self) -> None:
        """Frozen objects back to the collector (an engine was dropped: its cycles may now be garbage)."""
        gc.unfreeze()

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.thread_time()
        elif (time.thread_time() - self._started) * 1000 > self.slow_ms:  # CPU time: waits for a core do not count
            gc.freeze()  # the lists are consistent once a pass has stopped: every survivor is alive now
            self.freezes += 1


_freezer: HeapFreezer | None = None


def freeze_slow_survivors(slow_ms: float = 20.0) -> HeapFreezer:
    """The process's one `HeapFreezer`, installed (the app and `cairn serve` call this at start)."""
    global _freezer  # noqa: PLW0603 - one gc callback per process
    if _freezer is None:
        _freezer = HeapFreezer(slow_ms).install()
    return _freezer


def thaw_frozen() -> None:
    """`HeapFreezer.thaw` for the process's freezer, if one is installed."""
    if _freezer is not None:
        _freezer.thaw()
