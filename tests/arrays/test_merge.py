"""`merge_sorted` is np.insert at np.searchsorted's places, for every row of two key-sorted tables."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.arrays.merge import merge_sorted


def _insert(old: np.ndarray, add: np.ndarray) -> np.ndarray:
    at = np.searchsorted(old[0], add[0])
    return np.insert(old, at, add, axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_the_merge_is_numpys_insert(seed):
    rng = np.random.default_rng(seed)
    L, A = int(rng.integers(0, 300)), int(rng.integers(0, 60))
    keys = rng.choice(10_000, size=L + A, replace=seed % 2 == 0)  # odd seeds: repeated keys, old and added
    old = np.vstack([np.sort(keys[:L]), rng.integers(-5, 5, (3, L))])
    add = np.vstack([np.sort(keys[L:]), rng.integers(100, 200, (3, A))])
    got = merge_sorted(old, add)
    assert got.dtype == np.int64 and np.array_equal(got, _insert(old, add))


def test_added_keys_go_before_equal_old_ones_in_their_order():
    old = np.array([[1, 3, 3, 7], [10, 11, 12, 13]])
    add = np.array([[0, 3, 3, 9], [20, 21, 22, 23]])
    assert merge_sorted(old, add).tolist() == [[0, 1, 3, 3, 3, 3, 7, 9], [20, 10, 21, 22, 11, 12, 13, 23]]


def test_empty_tables_merge():
    old = np.zeros((2, 0), dtype=np.int64)
    add = np.array([[4, 5], [1, 2]])
    assert merge_sorted(old, add).tolist() == [[4, 5], [1, 2]]
    assert merge_sorted(add, old).tolist() == [[4, 5], [1, 2]]


def test_unsorted_or_mismatched_tables_are_refused():
    with pytest.raises(ValueError, match="sorted by their key"):
        merge_sorted(np.array([[2, 1]]), np.array([[0]]))
    with pytest.raises(ValueError, match="sorted by their key"):
        merge_sorted(np.array([[1, 2]]), np.array([[5, 0]]))
    with pytest.raises(ValueError, match="same rows"):
        merge_sorted(np.zeros((2, 3), dtype=np.int64), np.zeros((3, 1), dtype=np.int64))
