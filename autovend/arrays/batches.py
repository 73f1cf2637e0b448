"""Stock as dated batches in arrays: each row is one place (a machine's slot, or a product in the warehouse).

A row holds up to `width` batches as (expiry day, units) pairs, sorted by expiry day and packed to the left;
unused entries have expiry `NONE` and 0 units. This is the simulator's `autovend.sim.inventory` list of
[expiry_day, qty] pairs, one row per place: moves take the earliest-expiring units first, equal expiry days are
merged, a batch's expiry day never changes. Every function works on many rows at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Int32 = npt.NDArray[np.int32]
IntArray = npt.NDArray[np.int64]

NONE = np.iinfo(np.int32).max  # the expiry of an unused entry (sorts last)


class BatchTable:
    """`rows` places of up to `width` batches each (the width grows when a place needs more)."""

    def __init__(self, rows: int, width: int) -> None:
        self.expiry: Int32 = np.full((rows, width), NONE, dtype=np.int32)
        self.qty: Int32 = np.zeros((rows, width), dtype=np.int32)

    @property
    def width(self) -> int:
        """Batches a row can hold now."""
        return int(self.expiry.shape[1])

    def get(self, rows: IntArray) -> tuple[Int32, Int32]:
        """Copies of the batches of `rows`."""
        return self.expiry[rows], self.qty[rows]

    def put(self, rows: IntArray, expiry: Int32, qty: Int32) -> None:
        """Replace the batches of `rows` (distinct) by packed, sorted batches of any width."""
        need = int(np.count_nonzero(qty, axis=1).max()) if len(rows) else 0
        if need > self.width:  # a place holds more batches than ever before: widen every row
            extra = need - self.width
            self.expiry = np.concatenate([self.expiry, np.full((len(self.expiry), extra), NONE, np.int32)], axis=1)
            self.qty = np.concatenate([self.qty, np.zeros((len(self.qty), extra), np.int32)], axis=1)
        w = min(expiry.shape[1], self.width)
        self.expiry[rows, :w] = expiry[:, :w]
        self.qty[rows, :w] = qty[:, :w]
        self.expiry[rows, w:] = NONE
        self.qty[rows, w:] = 0

    def clear(self, rows: IntArray) -> None:
        """Empty `rows`."""
        self.expiry[rows] = NONE
        self.qty[rows] = 0


def taken_between(qty: Int32, start: IntArray, stop: IntArray) -> Int32:
    """Units of each batch among positions start..stop-1 of its row's queue (earliest-expiring units first)."""
    cum = np.cumsum(qty, axis=1, dtype=np.int64)
    before = cum - qty
    lo = np.maximum(before, start[:, None])
    hi = np.minimum(cum, stop[:, None])
    return np.maximum(hi - lo, 0).astype(np.int32)


def drop_front(expiry: Int32, qty: Int32, n: IntArray) -> tuple[Int32, Int32]:
    """The rows without their first `n` units (earliest first), packed to the left again."""
    cum = np.cumsum(qty, axis=1, dtype=np.int64)
    gone = cum <= n[:, None]  # batches taken whole: a prefix of the row
    shift = gone.sum(axis=1)
    left = qty - taken_between(qty, np.zeros_like(n), n)
    width = qty.shape[1]
    idx = np.arange(width)[None, :] + shift[:, None]
    inside = idx < width
    idx = np.minimum(idx, width - 1)
    new_q = np.where(inside, np.take_along_axis(left, idx, axis=1), 0).astype(np.int32)
    new_e = np.where(inside & (new_q > 0), np.take_along_axis(expiry, idx, axis=1), NONE).astype(np.int32)
    return new_e, new_q


def merge(expiry: Int32, qty: Int32, add_expiry: Int32, add_qty: Int32) -> tuple[Int32, Int32]:
    """The rows with the batches `add_*` put in: sorted by expiry, equal expiry days merged, packed left."""
    R = len(qty)
    r1, c1 = np.nonzero(qty > 0)
    r2, c2 = np.nonzero(add_qty > 0)
    row = np.concatenate([r1, r2]).astype(np.int64)
    key = (row << 32) | np.concatenate([expiry[r1, c1], add_expiry[r2, c2]]).astype(np.int64)
    units = np.concatenate([qty[r1, c1], add_qty[r2, c2]]).astype(np.int64)
    order = np.argsort(key, kind="stable")
    key, units = key[order], units[order]
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    total = np.add.reduceat(units, starts) if len(starts) else units
    ukey = key[starts]
    urow = ukey >> 32
    first = np.ones(len(urow), dtype=bool)
    first[1:] = urow[1:] != urow[:-1]
    idx = np.arange(len(urow))
    rank = idx - np.maximum.accumulate(np.where(first, idx, 0))
    width = int(rank.max()) + 1 if len(rank) else 1
    out_e = np.full((R, width), NONE, dtype=np.int32)
    out_q = np.zeros((R, width), dtype=np.int32)
    out_e[urow, rank] = (ukey & 0xFFFFFFFF).astype(np.int32)
    out_q[urow, rank] = total
    return out_e, out_q


def expiry_view(expiry: Int32, qty: Int32, day: int, soon: int) -> tuple[IntArray, IntArray, IntArray]:
    """Per row: units expired on `day`, unexpired units expiring within `soon` days, next expiry day (0: none)."""
    old = expiry <= day
    expired = np.where(old, qty, 0).sum(axis=1, dtype=np.int64)
    near = ~old & (expiry <= day + soon)
    expiring = np.where(near, qty, 0).sum(axis=1, dtype=np.int64)
    fresh = np.where(~old & (qty > 0), expiry, NONE).min(axis=1).astype(np.int64)
    fresh[fresh == NONE] = 0
    return expired, expiring, fresh
