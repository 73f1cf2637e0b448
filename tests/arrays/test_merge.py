"""`SortedColumns.merge` is np.insert at np.searchsorted's places, for every row of a key-sorted table."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.arrays.merge import SortedColumns


def _insert(old: np.ndarray, add: np.ndarray) -> np.ndarray:
    at = np.searchsorted(old[0], add[0])
    return np.insert(old, at, add, axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_merges_day_after_day_are_numpys_inserts(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(0, 300))
    keys = rng.choice(10_000, size=L, replace=seed % 2 == 0)  # odd seeds: repeated keys, old and added
    want = np.vstack([np.sort(keys), rng.integers(-5, 5, (3, L))])
    table = SortedColumns(want)
    for _ in range(5):  # the buffer grows past its spare room on the way
        A = int(rng.integers(0, 120))
        add = np.vstack([np.sort(rng.choice(10_000, size=A, replace=seed % 2 == 0)), rng.integers(100, 200, (3, A))])
        table.merge(add)
        want = _insert(want, add)
        got = table.view()
        assert got.dtype == np.int64 and np.array_equal(got, want)


def test_added_keys_go_before_equal_old_ones_in_their_order():
    table = SortedColumns(np.array([[1, 3, 3, 7], [10, 11, 12, 13]]))
    table.merge(np.array([[0, 3, 3, 9], [20, 21, 22, 23]]))
    assert table.view().tolist() == [[0, 1, 3, 3, 3, 3, 7, 9], [20, 10, 21, 22, 11, 12, 13, 23]]


def test_empty_tables_merge():
    table = SortedColumns(np.zeros((2, 0), dtype=np.int64))
    table.merge(np.zeros((2, 0), dtype=np.int64))
    table.merge(np.array([[4, 5], [1, 2]]))
    assert table.view().tolist() == [[4, 5], [1, 2]]


def test_unsorted_or_mismatched_tables_are_refused_and_nothing_changes():
    with pytest.raises(ValueError, match="sorted by its key"):
        SortedColumns(np.array([[2, 1]]))
    table = SortedColumns(np.array([[1, 2]]))
    with pytest.raises(ValueError, match="sorted by their key"):
        table.merge(np.array([[5, 0]]))
    with pytest.raises(ValueError, match="1 rows"):
        table.merge(np.zeros((3, 1), dtype=np.int64))
    assert table.view().tolist() == [[1, 2]]
