"""Exact array kernels of a simulated day: numpy's row sums of the stocked block, and Poisson quantiles.

The simulator computes a machine's total attraction W as `w.sum(axis=-1)` over the stocked block (its machines
x every product on some shelf, zeros where a machine does not hold a product). Floating-point addition is not
associative, so a total taken over a machine's own products alone can differ from it in the last bit.
`block_row_sums` gives numpy's own result from the non-zero entries and their places in the block, by walking
numpy's pairwise tree over the stretches that hold entries (`autovend.arrays.pairwise`, compiled).
`tests/arrays/test_kernel.py` holds it equal to `ndarray.sum`.

`exact_quantiles` is `autovend.demand.kernel.demand_from_uniforms` (the smallest n with P(N <= n) >= u) with a
fast path (`poisson_quantiles`): the Poisson CDF at 0..`FAST_TERMS`-1 by the recurrence p_n = p_{n-1} lam / n,
and the slow, exact routine for every draw whose uniform lies within `FAST_MARGIN` of a CDF value it is compared
with (where the two computations of the CDF could disagree) or beyond the terms computed. The margin is wide
enough that a rate off in its last bits gives the same draw, so the fast path can run on rates whose machine
totals were summed in any order, and only the unsure draws need the simulator's rates to the bit.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.pairwise import sorted_row_sums
from autovend.demand.kernel import demand_from_uniforms

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

FAST_TERMS = 400  # CDF terms of the fast path at most
FAST_MARGIN = 1e-9  # a uniform this close to a CDF value goes to the exact routine
FAST_RATE = 300.0  # rates above this go to the exact routine (exp(-rate) would lose its precision)
DENSE_CELLS = 1 << 19  # cells of the dense block `dense_row_sums` fills at a time (4 MiB)


def as_int64(x: npt.ArrayLike) -> IntArray:
    """`x` as a C-contiguous int64 array (no copy when it is one): what the compiled kernels take."""
    return np.ascontiguousarray(x, dtype=np.int64)


def as_int32(x: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """`x` as a C-contiguous int32 array (no copy when it is one)."""
    return np.ascontiguousarray(x, dtype=np.int32)


def nonzero(a: npt.ArrayLike) -> tuple[IntArray, ...]:
    """`np.nonzero(a)`: the same index arrays (C order), from `np.flatnonzero`.

    Several times faster on 2-d and 3-d arrays, whose `np.nonzero` works out every index of every entry.
    """
    arr = np.asarray(a)
    flat: IntArray = np.flatnonzero(arr)
    if arr.ndim <= 1:
        return (flat,)
    out: list[IntArray] = []
    for size in arr.shape[:0:-1]:
        flat, rem = np.divmod(flat, size)
        out.append(rem)
    out.append(flat)
    return tuple(out[::-1])


def sequential_sums(group: IntArray, order: IntArray, val: FloatArray, n_groups: int, start: FloatArray) -> FloatArray:
    """Per group, `start` plus its values added one by one in increasing `order` (left to right).

    `np.bincount` adds its weights into their bins one after the other in input order, so the values sorted by
    `order` (each group's start put first) give each group's running sum, exactly.
    """
    if not len(group):
        return start.copy()
    if len(order) and (order.min() < 0 or order.max() >= 2**40 or n_groups >= 2**22):
        raise ValueError("sequential_sums takes orders in 0..2**40 and fewer than 2**22 groups")
    sort = np.argsort(np.asarray(group, dtype=np.int64) << 41 | (np.asarray(order, dtype=np.int64) + 1), kind="stable")
    g = np.concatenate([np.arange(n_groups), group[sort]])
    v = np.concatenate([start, val[sort]])
    return np.bincount(g, weights=v, minlength=n_groups).astype(np.float64, copy=False)


def block_row_sums(
    row: IntArray, pos: IntArray, val: FloatArray, length: IntArray, n_rows: int, presorted: bool = False
) -> FloatArray:
    """numpy's `x.sum()` of rows given by their non-zero entries, for every row 0..n_rows-1.

    row, pos, val: each non-zero entry's row, its position in the row and its value; length: (n_rows,) the length
    of each row (entries not given are zeros). Rows without entries sum to 0. `presorted`: the entries already
    come by row, then position (they are not sorted again). Compiled: `autovend.arrays.pairwise.sorted_row_sums`.
    """
    out = np.zeros(n_rows, dtype=np.float64)
    if not len(row):
        return out
    row = np.asarray(row, dtype=np.int64)
    pos = np.asarray(pos, dtype=np.int64)
    val = np.asarray(val, dtype=np.float64)
    length = np.asarray(length, dtype=np.int64)
    if not presorted:
        order = np.argsort(row * (int(length.max()) + 1) + pos, kind="stable")  # by row, then position
        row, pos, val = row[order], pos[order], val[order]
    sorted_row_sums(row, pos, val, length, out)
    return out


def dense_row_sums(row: IntArray, pos: IntArray, val: FloatArray, length: int, n_rows: int) -> FloatArray:
    """`block_row_sums` of rows of one `length` (entries distinct and sorted by row), by numpy itself.

    The entries are written into a dense block of rows (a few hundred at a time) and numpy sums its rows: the
    same sums, cheaper than the walk where the rows are long and not sparse (the estimates' catalog rows).
    """
    out = np.zeros(n_rows, dtype=np.float64)
    if not len(row):
        return out
    chunk = max(1, min(n_rows, DENSE_CELLS // max(length, 1)))
    bounds = np.searchsorted(row, np.arange(0, n_rows + chunk, chunk))
    block = np.zeros((chunk, length), dtype=np.float64)
    for i, lo in enumerate(range(0, n_rows, chunk)):
        a, b = int(bounds[i]), int(bounds[i + 1])
        if a == b:
            continue
        r, c = row[a:b] - lo, pos[a:b]
        block[r, c] = val[a:b]
        out[lo : lo + chunk] = block[: min(chunk, n_rows - lo)].sum(axis=1)
        block[r, c] = 0.0
    return out


def poisson_quantiles(uniforms: npt.ArrayLike, rates: npt.ArrayLike) -> tuple[IntArray, BoolArray]:
    """Poisson quantiles where the fast path is sure of them, and where it is not (`demand_from_uniforms` there).

    Returns (quantiles, unsure): the quantile of every draw whose uniform lies farther than `FAST_MARGIN` from
    each CDF value it was compared with and below the `FAST_TERMS`-th, and a mask of the other draws, whose
    entries are 0 and must be taken from `demand_from_uniforms` with their exact rates. The margin also covers a
    rate off by a few units in the last place (the CDF moves by less than the rate does).
    """
    u = np.asarray(uniforms, dtype=np.float64)
    lam = np.asarray(rates, dtype=np.float64)
    out = np.zeros(u.shape, dtype=np.int64)
    if not u.size:
        return out, np.zeros(u.shape, dtype=bool)
    p = np.exp(-lam)
    cdf = p.copy()
    todo = lam > 0
    unsure = todo & ((np.abs(u - cdf) <= FAST_MARGIN) | (lam > FAST_RATE))
    left = todo & (u > cdf) & ~unsure  # the quantile is above n
    for n in range(1, FAST_TERMS):
        out += left
        idx = np.flatnonzero(left)
        if not len(idx):
            break
        p_i = p[idx] * lam[idx] / n
        p[idx] = p_i
        c = cdf[idx] + p_i
        cdf[idx] = c
        ui = u[idx]
        near = np.abs(ui - c) <= FAST_MARGIN
        unsure[idx] |= near
        left[idx] = (ui > c) & ~near
    unsure |= left  # beyond the terms computed
    out[unsure] = 0
    return out, unsure


def exact_quantiles(uniforms: npt.ArrayLike, rates: npt.ArrayLike) -> IntArray:
    """`demand_from_uniforms(uniforms, rates)`, taking the fast path where it is sure."""
    out, unsure = poisson_quantiles(uniforms, rates)
    if unsure.any():
        out[unsure] = demand_from_uniforms(np.asarray(uniforms)[unsure], np.asarray(rates)[unsure])
    return out
