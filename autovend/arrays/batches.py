"""Stock as dated batches in arrays: each row is one place (a machine's slot, or a product in the warehouse).

A row holds up to `width` batches as (expiry day, units) pairs, sorted by expiry day and packed to the left;
unused entries have expiry `NONE` and 0 units. This is the simulator's `autovend.sim.inventory` list of
[expiry_day, qty] pairs, one row per place: moves take the earliest-expiring units first, equal expiry days are
merged, a batch's expiry day never changes. Every function works on many rows at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.kernel import nonzero
from autovend.calibration.kernels import compiled

Int32 = npt.NDArray[np.int32]
IntArray = npt.NDArray[np.int64]

NONE = np.iinfo(np.int32).max  # the expiry of an unused entry (sorts last)


class BatchTable:
    """`rows` places of up to `width` batches each (the width grows when a place needs more)."""

    def __init__(self, rows: int, width: int) -> None:
        self.expiry: Int32 = np.full((rows, width), NONE, dtype=np.int32)
        self.qty: Int32 = np.zeros((rows, width), dtype=np.int32)
        self.used: Int32 = np.zeros(rows, dtype=np.int32)  # batches in each row (the first `used` entries)

    @property
    def width(self) -> int:
        """Batches a row can hold now."""
        return int(self.expiry.shape[1])

    def get(self, rows: IntArray) -> tuple[Int32, Int32]:
        """Copies of the batches of `rows`, as wide as the fullest of them needs (at least one entry)."""
        w = min(max(int(self.used[rows].max()) if len(rows) else 0, 1), self.width)
        # whole rows taken, then cut (np.take of a cut table would copy all of it first)
        return np.take(self.expiry, rows, axis=0)[:, :w], np.take(self.qty, rows, axis=0)[:, :w]

    def put(self, rows: IntArray, expiry: Int32, qty: Int32) -> None:
        """Replace the batches of `rows` (distinct) by packed, sorted batches of any width."""
        count = row_counts(qty)
        need = int(count.max()) if len(rows) else 0
        if need > self.width:  # a place holds more batches than ever before: widen every row
            extra = need - self.width
            self.expiry = np.concatenate([self.expiry, np.full((len(self.expiry), extra), NONE, np.int32)], axis=1)
            self.qty = np.concatenate([self.qty, np.zeros((len(self.qty), extra), np.int32)], axis=1)
        _put_rows(self.expiry, self.qty, self.used, np.asarray(rows, dtype=np.int64), expiry, qty, count)

    def clear(self, rows: IntArray) -> None:
        """Empty `rows`."""
        self.expiry[rows] = NONE
        self.qty[rows] = 0
        self.used[rows] = 0


# Rows hold a few batches: the kernels below go column by column, over all rows at once (numpy's reductions
# along short rows pay a per-row cost several times the work).


def row_counts(qty: Int32) -> Int32:
    """Batches with units in each row (`np.count_nonzero(qty, axis=1)`)."""
    count = np.zeros(len(qty), dtype=np.int32)
    for j in range(qty.shape[1]):
        count += qty[:, j] != 0
    return count


def row_sums(x: npt.NDArray[np.integer]) -> IntArray:
    """`x.sum(axis=1, dtype=np.int64)` of integer rows."""
    total = np.zeros(len(x), dtype=np.int64)
    for j in range(x.shape[1]):
        total += x[:, j]
    return total


def taken_between(qty: Int32, start: IntArray, stop: IntArray) -> Int32:
    """Units of each batch among positions start..stop-1 of its row's queue (earliest-expiring units first)."""
    out = np.empty(qty.shape, dtype=np.int32)
    before = np.zeros(len(qty), dtype=np.int64)  # units in the batches before this one
    for j in range(qty.shape[1]):
        cum = before + qty[:, j]
        out[:, j] = np.maximum(np.minimum(cum, stop) - np.maximum(before, start), 0)
        before = cum
    return out


def drop_front(expiry: Int32, qty: Int32, n: IntArray) -> tuple[Int32, Int32]:
    """The rows without their first `n` units (earliest first), packed to the left again."""
    new_e = np.empty(qty.shape, dtype=np.int32)
    new_q = np.empty(qty.shape, dtype=np.int32)
    _drop_front(expiry, qty, np.asarray(n, dtype=np.int64), new_e, new_q)
    return new_e, new_q


def merge(expiry: Int32, qty: Int32, add_expiry: Int32, add_qty: Int32) -> tuple[Int32, Int32]:
    """The rows with the batches `add_*` put in: sorted by expiry, equal expiry days merged, packed left."""
    R = len(qty)
    r1, c1 = nonzero(qty > 0)
    r2, c2 = nonzero(add_qty > 0)
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


@compiled(nogil=True, boundscheck=False)
def _put_rows(
    table_e: Int32, table_q: Int32, used: Int32, rows: IntArray, expiry: Int32, qty: Int32, count: Int32
) -> None:  # pragma: no cover - compiled
    """Rows `rows` of the table set to (expiry, qty), cut or padded (NONE, 0) to its width; `used` to `count`."""
    n_rows, W = table_e.shape
    w = min(expiry.shape[1], W)
    for i in range(len(rows)):
        r = rows[i]
        if r < 0 or r >= n_rows:
            raise IndexError("a batch row is outside the table")
        for j in range(w):
            table_e[r, j] = expiry[i, j]
            table_q[r, j] = qty[i, j]
        for j in range(w, W):
            table_e[r, j] = NONE
            table_q[r, j] = 0
        used[r] = count[i]


@compiled(nogil=True, boundscheck=False)
def _drop_front(
    expiry: Int32, qty: Int32, n: IntArray, new_e: Int32, new_q: Int32
) -> None:  # pragma: no cover - compiled
    """`drop_front` row by row: the batches taken whole (a prefix) go, the next loses the rest, all shift left."""
    R, width = qty.shape
    left = np.empty(width, dtype=np.int64)
    for i in range(R):
        take = n[i]
        before = 0
        shift = 0
        for j in range(width):
            cum = before + qty[i, j]
            if cum <= take:
                shift += 1
            left[j] = qty[i, j] - max(min(cum, take) - max(before, 0), 0)
            before = cum
        for j in range(width):
            src = j + shift
            if src < width and left[src] > 0:
                new_q[i, j] = left[src]
                new_e[i, j] = expiry[i, src]
            else:
                new_q[i, j] = left[src] if src < width else 0
                new_e[i, j] = NONE


# One row at a time, for compiled loops that move stock place by place (`visit_kernel`, `sell_kernel`).


@compiled(nogil=True, boundscheck=False)
def take_row(
    e: Int32, q: Int32, used: Int32, r: int, amount: int, pe: Int32, pq: Int32
) -> tuple[int, int]:  # pragma: no cover - compiled
    """Take up to `amount` units off row r of a table (e, q, used), earliest first, in place.

    The units taken go into pe, pq as (expiry, units) parts, earliest first; returns (parts, units taken).
    """
    left = amount
    parts = 0
    whole = 0
    for j in range(used[r]):
        if left <= 0:
            break
        t = min(int(q[r, j]), left)
        pe[parts] = e[r, j]
        pq[parts] = t
        parts += 1
        left -= t
        if t == q[r, j]:
            whole += 1
        else:
            q[r, j] -= t
    if whole:
        u = used[r]
        for j in range(u - whole):
            e[r, j] = e[r, j + whole]
            q[r, j] = q[r, j + whole]
        for j in range(u - whole, u):
            e[r, j] = NONE
            q[r, j] = 0
        used[r] = u - whole
    return parts, amount - left


@compiled(nogil=True, boundscheck=False)
def _widened(t: Int32, width: int, fill: int) -> Int32:  # pragma: no cover - compiled
    out = np.full((t.shape[0], width), fill, dtype=np.int32)
    out[:, : t.shape[1]] = t
    return out


@compiled(nogil=True, boundscheck=False)
def merge_row(
    e: Int32, q: Int32, used: Int32, r: int, pe: Int32, pq: Int32, parts: int
) -> tuple[Int32, Int32]:  # pragma: no cover - compiled
    """Put batches pe, pq (the first `parts`) into row r of a table (e, q, used), merging equal expiry days.

    Returns the table: the same arrays, or new ones just wide enough when the row needs more batches.
    """
    u = used[r]
    new = 0
    for i in range(parts):  # the batches a new expiry day adds
        if pq[i] <= 0:
            continue
        seen = False
        for j in range(u):
            if e[r, j] == pe[i]:
                seen = True
                break
        for j in range(i):
            if pq[j] > 0 and pe[j] == pe[i]:
                seen = True
                break
        if not seen:
            new += 1
    if u + new > e.shape[1]:
        e, q = _widened(e, u + new, NONE), _widened(q, u + new, 0)
    for i in range(parts):
        if pq[i] <= 0:
            continue
        x = pe[i]
        j = 0
        while j < u and e[r, j] < x:
            j += 1
        if j < u and e[r, j] == x:
            q[r, j] += pq[i]
            continue
        for jj in range(u, j, -1):
            e[r, jj] = e[r, jj - 1]
            q[r, jj] = q[r, jj - 1]
        e[r, j] = x
        q[r, j] = pq[i]
        u += 1
    used[r] = u
    return e, q


@compiled(nogil=True, boundscheck=False)
def table_expiry(
    expiry: Int32, qty: Int32, used: Int32, day: int, soon: int, expired: Int32, expiring: Int32, nxt: Int32
) -> None:  # pragma: no cover - compiled
    """Per row of a table, into the (rows,) outputs: expired units, soon-expiring units, the next expiry day.

    Units expired on `day`, unexpired units expiring within `soon` days, and the expiry day of the earliest
    unexpired batch (0: none). Only each row's used batches are read.
    """
    for r in range(len(used)):
        old = 0
        near = 0
        first = 0
        for j in range(used[r]):
            e, q = expiry[r, j], qty[r, j]
            if e <= day:
                old += q
            else:
                if first == 0 and q > 0:
                    first = e
                if e <= day + soon:
                    near += q
        expired[r], expiring[r], nxt[r] = old, near, first
