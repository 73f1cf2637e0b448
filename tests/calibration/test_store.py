"""The blocks' store (`store.CellStore`): calls on every block, or on one block after another."""

from __future__ import annotations

from types import SimpleNamespace

from autovend.calibration.store import local_store


def test_each_gives_every_blocks_result_in_block_order_computing_at_most_one_ahead():
    made: list[int] = []

    def fn(block, scale):
        made.append(block.index)
        return block.index * scale

    blocks = [SimpleNamespace(index=i) for i in range(4)]
    store = local_store(blocks, [(i, i + 1) for i in range(4)])
    seen = []
    for value in store.each(fn, 10):
        seen.append((value, list(made)))
    # block b's result is used while block b + 1's is made (in this process: made at once, before b is used)
    assert seen == [(0, [0, 1]), (10, [0, 1, 2]), (20, [0, 1, 2, 3]), (30, [0, 1, 2, 3])]
    assert list(local_store([], []).each(fn, 1)) == []
