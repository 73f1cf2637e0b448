"""The blocks' store (`store.CellStore`): calls on every block, or on one block after another."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from autovend.calibration.store import CellStore, local_store


def test_each_in_this_process_computes_a_block_when_it_is_due_in_block_order():
    made: list[int] = []

    def fn(block, scale):
        made.append(block.index)
        return block.index * scale

    blocks = [SimpleNamespace(index=i) for i in range(4)]
    store = local_store(blocks, [(i, i + 1) for i in range(4)])
    seen = [(value, list(made)) for value in store.each(fn, 10)]
    # in this process a call is done when it is made: nothing is gained by making one early, and one result is held
    assert seen == [(0, [0]), (10, [0, 1]), (20, [0, 1, 2]), (30, [0, 1, 2, 3])]
    assert list(local_store([], []).each(fn, 1)) == []


class _Lanes:
    """Groups on two workers whose calls wait until their results are asked for (a record of what was begun)."""

    def __init__(self, states, lanes, depth):
        self.states, self.lanes, self.depth = states, lanes, depth
        self.log: list[tuple[str, int]] = []

    def start_on(self, group, fn, *args):
        index = args[0]
        self.log.append(("begin", index))

        def wait():
            self.log.append(("used", index))
            return fn(self.states[group], *args)

        return wait


@pytest.mark.parametrize("depth", [1, 2])
def test_each_keeps_every_worker_ahead_on_its_own_blocks_within_depth(depth):
    # blocks 0-3 in groups of two, the groups on workers 0, 1, 0, 1 (as `DaskExecutor.groups` places them)
    blocks = [SimpleNamespace(index=i) for i in range(8)]
    layout = [[0, 1], [2, 3], [4, 5], [6, 7]]
    groups = _Lanes([[blocks[b] for b in g] for g in layout], [0, 1, 0, 1], depth)
    store = CellStore(groups, layout, [(i, i + 1) for i in range(8)], "two workers")
    values = []
    for value in store.each(lambda block, scale: block.index * scale, 10):
        values.append(value)
        begun = {i for what, i in groups.log if what == "begin"}
        used = {i for what, i in groups.log if what == "used"}
        for lane_blocks in ([0, 1, 4, 5], [2, 3, 6, 7]):  # each worker has its next `depth` blocks under way
            ahead = [b for b in lane_blocks if b in begun and b not in used]
            left = [b for b in lane_blocks if b not in used]
            assert ahead == (left[: depth - 1] if value // 10 in lane_blocks else left[:depth])
    assert values == [10 * i for i in range(8)]
    assert [i for what, i in groups.log if what == "used"] == list(range(8))  # used in block order
    # worker 1 begins its first block before worker 0's first is used: the two work at once
    assert groups.log.index(("begin", 2)) < groups.log.index(("used", 0))
