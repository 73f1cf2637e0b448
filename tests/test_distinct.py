"""`distinct` is np.unique's result, dtype and all, for integer and boolean arrays (and defers to it otherwise)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autovend.distinct import distinct

KINDS = [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_]


@given(st.sampled_from(KINDS).flatmap(lambda t: hnp.arrays(t, hnp.array_shapes(min_dims=0, max_dims=2, min_side=0))))
def test_distinct_is_np_unique_for_integers_and_booleans(a):
    got, want = distinct(a), np.unique(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("values", [[2.0, np.nan, 1.0, np.nan, 2.0], ["b", "a", "b"], [1.5, -0.0, 0.0]])
def test_other_kinds_go_to_np_unique(values):
    a = np.array(values)
    np.testing.assert_array_equal(distinct(a), np.unique(a))  # one NaN, as np.unique keeps (equal_nan)


def test_many_distinct_values_come_out_sorted_once_each():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 10**9, 200_000)
    out = distinct(a)
    assert np.all(np.diff(out) > 0) and set(out.tolist()) == set(a.tolist())
