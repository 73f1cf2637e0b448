"""Batches in arrays move as the simulator's lists of [expiry_day, qty] do (`autovend.sim.inventory`)."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.arrays.batches import (
    NONE,
    BatchTable,
    drop_front,
    merge,
    row_counts,
    row_sums,
    table_expiry,
    taken_between,
)
from autovend.sim import inventory as inv


def _rows(places: list[list[list[int]]], width: int) -> tuple[np.ndarray, np.ndarray]:
    e = np.full((len(places), width), NONE, dtype=np.int32)
    q = np.zeros((len(places), width), dtype=np.int32)
    for i, b in enumerate(places):
        for j, (x, y) in enumerate(b):
            e[i, j], q[i, j] = x, y
    return e, q


def _lists(e: np.ndarray, q: np.ndarray) -> list[list[list[int]]]:
    return [[[int(x), int(y)] for x, y in zip(er, qr, strict=True) if y > 0] for er, qr in zip(e, q, strict=True)]


def _random_place(rng: np.random.Generator) -> list[list[int]]:
    place: list[list[int]] = []
    inv.add(place, [(int(rng.integers(1, 40)), int(rng.integers(1, 9))) for _ in range(int(rng.integers(0, 6)))])
    return place


def test_take_and_add_match_the_simulators_lists():
    rng = np.random.default_rng(0)
    for _ in range(200):
        places = [_random_place(rng) for _ in range(8)]
        parts = [_random_place(rng) for _ in range(8)]
        take = np.array([int(rng.integers(0, inv.total(p) + 1)) for p in places], dtype=np.int64)
        e, q = _rows(places, 8)
        taken = taken_between(q, np.zeros(8, dtype=np.int64), take)
        left_e, left_q = drop_front(e, q, take)
        pe, pq = _rows(parts, 8)
        me, mq = merge(left_e, left_q, pe, pq)
        for i, place in enumerate(places):
            got = inv.take(place, int(take[i]))
            assert sorted((int(x), int(y)) for x, y in zip(e[i], taken[i], strict=True) if y) == sorted(got)
            assert _lists(left_e, left_q)[i] == place
            inv.add(place, [tuple(x) for x in parts[i]])
            assert _lists(me, mq)[i] == place
            assert (me[i][mq[i] == 0] == NONE).all() and (np.diff(me[i][mq[i] > 0]) > 0).all()


def test_an_interval_of_the_queue_is_what_successive_takes_get():
    rng = np.random.default_rng(1)
    place = _random_place(rng) + [[50, 30]]
    e, q = _rows([place] * 3, 8)
    cuts = np.array([0, 4, 11, 20])
    got = taken_between(q, cuts[:-1], cuts[1:])
    copy = [list(b) for b in place]
    for i in range(3):
        want = inv.take(copy, int(cuts[i + 1] - cuts[i]))
        assert sorted((int(x), int(y)) for x, y in zip(e[i], got[i], strict=True) if y) == sorted(want)


def _expiry_view(e, q, day, soon):
    out = np.full((3, len(q)), -1, dtype=np.int32)
    table_expiry(e, q, row_counts(q), day, soon, out[0], out[1], out[2])
    return out


def test_expiry_view_and_a_table_that_widens():
    e, q = _rows([[[3, 2], [9, 4], [20, 1]], [[15, 5]], []], 4)
    expired, soon, nxt = _expiry_view(e, q, day=5, soon=7)
    assert expired.tolist() == [2, 0, 0] and soon.tolist() == [4, 0, 0] and nxt.tolist() == [9, 15, 0]
    table = BatchTable(3, 2)
    table.put(np.array([1]), *_rows([[[1, 1], [2, 1], [3, 1]]], 3))
    assert table.width == 3 and _lists(table.expiry, table.qty) == [[], [[1, 1], [2, 1], [3, 1]], []]


def test_a_table_hands_out_its_rows_as_wide_as_they_need():
    table = BatchTable(4, 6)
    table.put(np.array([0, 2]), *_rows([[[4, 1], [7, 2]], [[5, 3], [6, 1], [9, 2]]], 3))
    assert table.used.tolist() == [2, 0, 3, 0]
    e, q = table.get(np.array([0, 1]))
    assert e.shape == (2, 2) and _lists(e, q) == [[[4, 1], [7, 2]], []]
    e, q = table.get(np.array([3]))  # empty rows: one empty entry each
    assert e.shape == (1, 1) and _lists(e, q) == [[]]
    table.put(np.array([2]), *drop_front(*table.get(np.array([2])), np.array([4])))
    table.clear(np.array([0]))
    assert table.used.tolist() == [0, 0, 1, 0] and _lists(table.expiry, table.qty)[2] == [[9, 2]]


def test_the_column_by_column_kernels_are_numpys_row_formulas():
    rng = np.random.default_rng(3)
    for width in (1, 2, 5, 9):
        places = [_random_place(rng) for _ in range(60)]
        e, q = _rows([p[:width] for p in places], width)
        n = rng.integers(0, 30, len(q))
        start = np.minimum(rng.integers(0, 20, len(q)), n)
        cum = np.cumsum(q, axis=1, dtype=np.int64)  # the row formulas
        want = np.maximum(np.minimum(cum, n[:, None]) - np.maximum(cum - q, start[:, None]), 0)
        assert np.array_equal(taken_between(q, start, n), want)
        shift = (cum <= n[:, None]).sum(axis=1)
        idx = np.arange(width)[None, :] + shift[:, None]
        left = np.take_along_axis(q - taken_between(q, np.zeros_like(n), n), np.minimum(idx, width - 1), axis=1)
        want_q = np.where(idx < width, left, 0)
        want_e = np.where((idx < width) & (want_q > 0), np.take_along_axis(e, np.minimum(idx, width - 1), 1), NONE)
        got_e, got_q = drop_front(e, q, n)
        assert np.array_equal(got_q, want_q) and np.array_equal(got_e, want_e) and got_e.dtype == np.int32
        assert np.array_equal(row_counts(q), np.count_nonzero(q, axis=1))
        assert np.array_equal(row_sums(q), q.sum(axis=1, dtype=np.int64))
        day = int(rng.integers(0, 30))
        old = e <= day
        fresh = np.where(~old & (q > 0), e, NONE).min(axis=1).astype(np.int64)
        want_v = (
            np.where(old, q, 0).sum(1),
            np.where(~old & (e <= day + 7), q, 0).sum(1),
            np.where(fresh == NONE, 0, fresh),
        )
        got_v = _expiry_view(e, q, day, 7)  # compiled, over each row's used batches
        assert all(np.array_equal(a, b) for a, b in zip(got_v, want_v, strict=True))


def test_put_writes_each_row_cut_or_padded_to_the_tables_width():
    rng = np.random.default_rng(5)
    for width, given in ((4, 2), (4, 4), (3, 6), (1, 1)):
        table = BatchTable(30, width)
        before_e, before_q = table.expiry.copy(), table.qty.copy()
        rows = rng.choice(30, 12, replace=False)
        places = [_random_place(rng)[: min(given, width)] for _ in rows]
        e, q = _rows(places, given)
        table.put(rows, e, q)
        want_e, want_q = before_e, before_q
        w = min(given, width)
        want_e[rows] = NONE
        want_q[rows] = 0
        want_e[rows, :w], want_q[rows, :w] = e[:, :w], q[:, :w]
        assert np.array_equal(table.expiry, want_e) and np.array_equal(table.qty, want_q)
        assert table.used[rows].tolist() == [len(p) for p in places] and table.used.sum() == sum(map(len, places))
    with pytest.raises(IndexError, match="outside the table"):
        table.put(np.array([30]), *_rows([[[1, 1]]], 1))
