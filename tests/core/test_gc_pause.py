"""The garbage-collector helpers: a paused block, and survivors of a slow full pass kept out of later ones."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from core.base.gc_pause import HeapFreezer, gc_paused


class Node:
    """A cycle's member (a plain object in a cycle is only freed by the collector)."""

    def __init__(self) -> None:
        self.other: Node | None = None


def make_cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture
def clean_gc() -> Iterator[None]:
    """No frozen objects and no other freezer (one another test's `cairn serve` installed) meanwhile."""
    others = [cb for cb in gc.callbacks if isinstance(getattr(cb, "__self__", None), HeapFreezer)]
    for cb in others:
        gc.callbacks.remove(cb)
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()
    gc.callbacks.extend(others)


def test_gc_paused_disables_only_inside_the_block(clean_gc: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError
    assert gc.isenabled()


def test_a_slow_full_pass_freezes_its_survivors(clean_gc: None) -> None:
    freezer = HeapFreezer(slow_ms=0.0).install()  # every full pass counts as slow
    try:
        alive = [Node() for _ in range(100)]
        gc.collect()
        assert freezer.freezes == 1
        assert gc.get_freeze_count() >= len(alive)
        assert not gc.get_objects(generation=2)  # the next full pass has nothing old to walk
    finally:
        freezer.uninstall()


def test_fast_and_young_passes_freeze_nothing(clean_gc: None) -> None:
    fast = HeapFreezer(slow_ms=60_000.0).install()
    try:
        gc.collect()
        gc.collect(0)
        gc.collect(1)
        assert fast.freezes == 0
        assert gc.get_freeze_count() == 0
    finally:
        fast.uninstall()
    young = HeapFreezer(slow_ms=0.0).install()
    try:
        gc.collect(0)
        gc.collect(1)
        assert young.freezes == 0
        assert gc.get_freeze_count() == 0
    finally:
        young.uninstall()


def test_garbage_is_collected_before_the_freeze_and_thaw_releases_frozen_cycles(clean_gc: None) -> None:
    freezer = HeapFreezer(slow_ms=0.0).install()
    try:
        dead = make_cycle()  # garbage already: the pass frees it, it is not frozen
        kept = Node()
        kept.other = Node()
        kept.other.other = kept
        later = weakref.ref(kept)
        gc.collect()
        assert dead() is None
        assert freezer.freezes == 1
        del kept  # a frozen cycle that dies is kept ...
        freezer.uninstall()
        gc.collect()
        assert later() is not None
        freezer.thaw()  # ... until the frozen objects are given back
        gc.collect()
        assert later() is None
        assert gc.get_freeze_count() == 0
    finally:
        freezer.uninstall()


def test_install_is_idempotent(clean_gc: None) -> None:
    freezer = HeapFreezer()
    freezer.install().install()
    try:
        assert gc.callbacks.count(freezer._on_gc) == 1
    finally:
        freezer.uninstall()
    assert freezer._on_gc not in gc.callbacks


def test_the_process_freezer_is_one_and_thaw_reaches_it(clean_gc: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.base.gc_pause as gp

    monkeypatch.setattr(gp, "_freezer", None)
    first = gp.freeze_slow_survivors(slow_ms=0.0)
    try:
        assert gp.freeze_slow_survivors() is first
        assert gc.callbacks.count(first._on_gc) == 1
        gc.collect()
        assert gc.get_freeze_count() > 0
        gp.thaw_frozen()
        assert gc.get_freeze_count() == 0
    finally:
        first.uninstall()
