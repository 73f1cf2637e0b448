"""The baseline's per-machine rules on many rows at once: each row is one machine's list of products.

A row is an (S,) stretch of slots, `valid` marking the products the list holds and `pos` each one's place in
the list (the baseline's lists run in catalog order). The rules are `autovend.agents.baseline.targets`'
`shelf_targets` (compiled: `shelf_kernel`) and `fit_within`, with the same arithmetic in the same order, so they
give the same integers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.shelf_kernel import shelf_target_rows
from autovend.arrays.kernel import as_int64

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
LAST = np.iinfo(np.int64).max // 4  # the place of an entry that is not in the list


def list_pos(key: npt.ArrayLike, valid: BoolArray) -> IntArray:
    """Each valid entry's place in its row's list ordered by `key` (ascending); LAST elsewhere."""
    return list_order(key, valid)[0]


def list_order(key: npt.ArrayLike, valid: BoolArray) -> tuple[IntArray, IntArray]:
    """`list_pos`, and each row's entries in list order (the valid ones first: `order[:, :count]`)."""
    k = np.where(valid, np.asarray(key, dtype=np.int64), LAST)
    order = np.argsort(k, axis=-1, kind="stable")
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.broadcast_to(np.arange(k.shape[-1]), k.shape), axis=-1)
    return np.where(valid, pos, LAST), order


def _first_in_order(eligible: BoolArray, rank: IntArray, count: IntArray) -> BoolArray:
    """Per row, the first `count` eligible entries in `rank` order (rank: 0.. along the row, LAST if out)."""
    S = eligible.shape[-1]  # (rank, column) as one distinct key: numpy's unstable sort gives the stable order
    order = np.argsort(np.where(eligible, np.minimum(rank, S), S) * S + np.arange(S), axis=-1)
    e_sorted = np.take_along_axis(eligible, order, axis=-1)
    taken_sorted = e_sorted & (np.cumsum(e_sorted, axis=-1) <= count[:, None])
    out = np.zeros_like(eligible)
    np.put_along_axis(out, order, taken_sorted, axis=-1)
    return out


def shelf_targets(
    need: FloatArray,
    rate: FloatArray,
    limit: FloatArray,
    valid: BoolArray,
    pos: IntArray,
    room: IntArray,
    facing: int,
    fill: BoolArray,
) -> IntArray:
    """`autovend.agents.baseline.targets.shelf_targets` of every row (0 outside the list), compiled."""
    f64 = lambda x: np.ascontiguousarray(x, dtype=np.float64)  # noqa: E731
    return shelf_target_rows(
        f64(need),
        f64(rate),
        f64(limit),
        np.ascontiguousarray(valid, dtype=np.bool_),
        as_int64(pos),
        as_int64(room),
        int(facing),
        np.ascontiguousarray(fill, dtype=np.bool_),
    )


def fit_within(need: IntArray, valid: BoolArray, pos: IntArray, free: IntArray) -> IntArray:
    """`autovend.agents.baseline.targets.fit_within` of every row: scaled down to sum to at most `free`."""
    need = np.where(valid, need, 0)
    total = need.sum(axis=1)
    fits = total <= free
    out = need.copy()
    cut = ~fits
    if not cut.any():
        return out
    f, t, nd, v, p = free[cut], total[cut], need[cut], valid[cut], pos[cut]
    exact = nd * (np.maximum(f, 0) / t)[:, None]
    low = np.floor(exact).astype(np.int64)
    left = f - low.sum(axis=1)
    order = np.lexsort((np.where(v, p, LAST), np.where(v, -(exact - low), np.inf)), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(nd.shape[1]), nd.shape), axis=-1)
    low = low + _first_in_order(v & (low < nd), rank, np.maximum(left, 0))
    out[cut] = np.where((f > 0)[:, None], low, 0)
    return out
