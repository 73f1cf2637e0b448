"""The day's sales booked, compiled: slot by slot, the units sold leave the shelf earliest-expiring first.

For each selling slot: its batches give up the units sold (`batches.take_row`), those already expired are counted
(the simulator fines them), their cost leaves the book at their expiry days; the slot and machine lose the units;
the slot's units, revenue (units x the price in force) and cost of goods sold (the unexpired units at cost) are
set; each run's units, expired units and revenue are summed. All integers: exactly `autovend.sim.sales`' books.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.batches import take_row
from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
Int32 = npt.NDArray[np.int32]


@compiled(nogil=True, boundscheck=False)
def sell(
    n: IntArray, m: IntArray, s: IntArray, k: IntArray, sales: IntArray, day: int,
    sh_e: Int32, sh_q: Int32, sh_used: Int32, slot_q: IntArray, shelf_n: IntArray, price: Int32, cost: IntArray,
    book: IntArray, sold: IntArray, revenue: IntArray, cogs: IntArray, per_run: IntArray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Book the sales of cells (run n, machine m, slot s, product k; sales > 0), in place (module docstring).

    price: (N, M, K) prices in force (fen); sold, revenue, cogs: (N, M, S), set at the cells; per_run: (3, N)
    units, expired units and revenue, added to.
    """
    M, S = slot_q.shape[1], slot_q.shape[2]
    pe = np.empty(sh_e.shape[1], dtype=np.int32)
    pq = np.empty(sh_e.shape[1], dtype=np.int32)
    for i in range(len(n)):
        a, b, c, kk, x = n[i], m[i], s[i], k[i], sales[i]
        parts, _ = take_row(sh_e, sh_q, sh_used, (a * M + b) * S + c, x, pe, pq)
        expired = 0
        for j in range(parts):
            if pe[j] <= day:
                expired += pq[j]
            book[a, pe[j]] -= pq[j] * cost[kk]
        slot_q[a, b, c] -= x
        shelf_n[a, b] -= x
        rev = x * np.int64(price[a, b, kk])
        sold[a, b, c] = x
        revenue[a, b, c] = rev
        cogs[a, b, c] = (x - expired) * cost[kk]
        per_run[0, a] += x
        per_run[1, a] += expired
        per_run[2, a] += rev
