"""memtrim.BulkGc: a bulk step's objects leave the GC's generations; cycles among them are
reclaimed by the collection of the frozen heap."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from ovn_northd_py.memtrim import BulkGc


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic GC frees it


@pytest.fixture
def paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def test_a_bulk_step_is_frozen_and_its_garbage_cycles_go_with_the_collection(paused: None) -> None:
    b = BulkGc()
    before = gc.get_freeze_count()
    keep = [[i] for i in range(BulkGc.BULK + 10)]
    garbage = _Node()
    gone = weakref.ref(garbage)
    del garbage
    b.after_step()
    assert gc.get_freeze_count() >= before + len(keep)
    assert gc.get_count()[0] < 1000  # (nothing left for a young collection to traverse)
    assert gone() is not None  # a frozen cycle waits for the collection of the frozen heap
    b.collect()
    assert gone() is None
    assert b.base == gc.get_freeze_count() > 0  # (what is left is frozen again)


def test_a_small_step_is_left_to_the_young_collections(paused: None) -> None:
    b = BulkGc()
    before = gc.get_freeze_count()
    _small = [[i] for i in range(100)]
    b.after_step()
    assert gc.get_freeze_count() == before


def test_the_frozen_heap_is_collected_when_it_doubles_once_armed(paused: None) -> None:
    b = BulkGc()
    first = [[i] for i in range(BulkGc.BULK + 10)]
    b.after_step()
    assert b.base == 0  # not armed: the cold sync's steps collect nothing
    b.armed = True
    second = [[i] for i in range(BulkGc.BULK + 10)]
    b.after_step()
    base = b.base
    assert base >= BulkGc.BULK
    garbage = _Node()
    gone = weakref.ref(garbage)
    del garbage
    third = [[i] for i in range(base + 10)]  # the frozen heap more than doubles
    b.after_step()
    assert gone() is None
    assert b.base > base
    assert first and second and third


def test_a_quiet_spell_after_small_steps_collects_nothing(paused: None) -> None:
    b = BulkGc()
    _bulk = [[i] for i in range(BulkGc.BULK + 10)]
    b.after_step()
    b.collect()
    base = b.base
    garbage = _Node()
    gone = weakref.ref(garbage)
    del garbage
    b.collect()  # (nothing frozen since: no full collection)
    assert gone() is not None and b.base == base
