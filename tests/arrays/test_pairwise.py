"""numpy's pairwise sums, compiled: of a stretch of an array, and of rows given by their entries, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.arrays.pairwise import pairwise_sum, sorted_row_sums


def test_pairwise_sum_is_numpys_sum_to_the_bit():
    rng = np.random.default_rng(7)
    for n in [*range(0, 140), 255, 256, 257, 1000, 1031, 4099]:
        x = rng.standard_normal(n + 3) * 10.0 ** rng.integers(-8, 9, n + 3)
        for lo in (0, 3):  # also a stretch that does not start at the array's first entry
            want = np.sum(x[lo : lo + n])
            assert pairwise_sum(x, lo, n).hex() == float(want).hex(), (n, lo)
    # a sum that depends on the order: 1 + 2^53's pieces, which a sequential sum would round away
    y = np.array([2.0**53] + [1.0] * 15)
    assert pairwise_sum(y, 0, 16) == np.sum(y) != sum(y.tolist())
    for n in (1, 8, 200):  # numpy's sum of -0.0s is 0.0, though its 8 accumulators start at -0.0
        assert pairwise_sum(np.full(n, -0.0), 0, n).hex() == np.sum(np.full(n, -0.0)).hex() == "0x0.0p+0"


def _sums(x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    r, p = np.nonzero(x)
    out = np.full(len(x), np.nan)
    sorted_row_sums(r, p, x[r, p], lengths.astype(np.int64), out)
    return out


@pytest.mark.parametrize("C", [1, 7, 8, 9, 127, 128, 129, 136, 257, 1372, 4099, 40_000])
def test_rows_from_their_entries_are_numpys_row_sums(C):
    rng = np.random.default_rng(C)
    R = 30
    density = rng.uniform(0.0005, 0.8, (R, 1))  # from a few entries in a deep tree to nearly dense rows
    x = rng.standard_normal((R, C)) * 10.0 ** rng.integers(-6, 7, (R, C)) * (rng.random((R, C)) < density)
    x[0] = 0.0  # a row without entries
    x[1, -1] = 3.0  # the last place taken
    got = _sums(x, np.full(R, C))
    want = np.where((x != 0).any(axis=1), x.sum(axis=1), np.nan)  # rows without entries are left as they were
    assert np.isnan(got[0]) and [v.hex() for v in got] == [float(v).hex() for v in want]
    has = (x != 0).any(axis=1)
    running = np.array([sum(row.tolist()) for row in x[has]])
    assert (got[has] != running).any() or C < 9  # the order of the additions matters


def test_rows_of_their_own_lengths_sum_as_numpy_sums_each():
    rng = np.random.default_rng(11)
    lengths = np.array([1, 5, 8, 100, 128, 129, 300, 1031, 5000, 2])
    rows, pos, val, want = [], [], [], []
    for i, L in enumerate(lengths):
        x = rng.standard_normal(L) * 10.0 ** rng.integers(-6, 7, L) * (rng.random(L) < 0.4)
        x[0] = 1.5
        nz = np.flatnonzero(x)
        rows += [i] * len(nz)
        pos += nz.tolist()
        val += x[nz].tolist()
        want.append(x.sum())
    out = np.zeros(len(lengths))
    sorted_row_sums(np.array(rows), np.array(pos), np.array(val), lengths, out)
    assert [v.hex() for v in out] == [float(v).hex() for v in want]


@pytest.mark.parametrize(
    "row, pos, what",
    [
        ([1, 0], [0, 0], "by row"),  # rows out of order
        ([0, 3], [0, 0], "by row"),  # a row past the last
        ([0, 0], [2, 1], "distinct positions"),  # positions out of order
        ([0, 0], [1, 1], "distinct positions"),  # a position twice
        ([0], [4], "distinct positions"),  # past the row's end
        ([0], [-1], "distinct positions"),
    ],
)
def test_entries_out_of_order_or_outside_their_row_are_refused(row, pos, what):
    out = np.zeros(3)
    with pytest.raises(ValueError, match=what):
        sorted_row_sums(np.array(row), np.array(pos), np.ones(len(row)), np.full(3, 4), out)


@pytest.mark.parametrize("C", [5, 8, 64, 300])
def test_entries_of_zero_or_minus_zero_sum_as_numpy_sums_them(C):
    rng = np.random.default_rng(C + 1)
    R = 40
    x = rng.standard_normal((R, C)) * (rng.random((R, C)) < 0.3)
    given = rng.random((R, C)) < 0.5  # the places passed as entries: some hold 0.0 ...
    x[rng.random((R, C)) < 0.2] = -0.0  # ... or -0.0
    x[:5] = np.where(rng.random((5, C)) < 0.5, -0.0, 0.0)  # rows of signed zeros alone
    x[5] = -0.0  # numpy's sum of it is 0.0 (the tree's sum, -0.0, added to 0.0)
    given[5] = True
    r, p = np.nonzero(given | (x != 0))
    out = np.full(R, np.nan)
    sorted_row_sums(r, p, x[r, p], np.full(R, C), out)
    want = x.sum(axis=1)
    has = np.zeros(R, dtype=bool)
    has[r] = True
    assert [v.hex() for v in out[has]] == [float(v).hex() for v in want[has]]
    assert not np.signbit(out[5])
