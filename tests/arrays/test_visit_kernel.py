"""The compiled visit's row moves (`visit_kernel._take`, `_merge`) are the simulator's list moves
(`autovend.sim.inventory.take` and `add`), and a table widens to exactly the batches a row needs."""

from __future__ import annotations

import numpy as np

from autovend.arrays.batches import NONE, row_counts
from autovend.arrays.batches import merge_row as _merge
from autovend.arrays.batches import take_row as _take
from autovend.sim import inventory as inv
from tests.arrays.test_batches import _lists, _random_place, _rows


def _table(places: list[list[list[int]]], width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    e, q = _rows(places, width)
    return e, q, row_counts(q)


def test_takes_and_merges_are_the_simulators_list_moves():
    rng = np.random.default_rng(3)
    for _ in range(300):
        places = [_random_place(rng) for _ in range(6)]
        e, q, used = _table(places, 6)
        r = int(rng.integers(0, 6))
        amount = int(rng.integers(0, inv.total(places[r]) + 1))
        pe = np.empty(12, dtype=np.int32)
        pq = np.empty(12, dtype=np.int32)
        parts, taken = _take(e, q, used, r, amount, pe, pq)
        want = inv.take(places[r], amount)
        assert taken == sum(x for _, x in want) and [
            [int(a), int(b)] for a, b in zip(pe[:parts], pq[:parts], strict=True)
        ] == [list(p) for p in want]
        add = _random_place(rng)
        ae, aq = _rows([add], 6)
        e, q = _merge(e, q, used, r, ae[0], aq[0], len(add))
        inv.add(places[r], [tuple(x) for x in add])
        assert _lists(e, q) == places  # every row, the others untouched
        assert used.tolist() == row_counts(q).tolist()
        assert (e[q == 0] == NONE).all() and all((np.diff(x[y > 0]) > 0).all() for x, y in zip(e, q, strict=True))


def test_a_row_that_needs_more_batches_widens_the_table_to_just_that():
    e, q, used = _table([[[3, 2], [9, 4]], [[5, 1]]], 2)
    parts = np.array([1, 9, 12, 20], dtype=np.int32), np.array([1, 1, 1, 0], dtype=np.int32)  # 9 is merged
    e2, q2 = _merge(e, q, used, 0, parts[0], parts[1], 4)
    assert e2.shape == (2, 4) and e.shape == (2, 2)  # a new table, the old one left as it was
    assert _lists(e2, q2) == [[[1, 1], [3, 2], [9, 5], [12, 1]], [[5, 1]]]
    assert used.tolist() == [4, 1]
