"""The orders' sums over the machines of a run, compiled: one pass over the carried slots instead of a bincount each.

`orders.place_orders` needs, for every product a run carries somewhere, sums over its machines of the shelf
targets, the rates, the rates to plan on (0 while on trial), the variances over the lead time, the margins and
the shelf units. `np.bincount` adds its weights into their bins one after the other in input order; this adds
the same values in the same order (the carried slots by run, machine and slot), so every sum is the bincount's,
to the bit. The products carried nowhere in a run are left out (`live`: run * K + product, ascending).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

SUMS = 6  # shelf targets, rates, planned rates, lead-time variances, margins, shelf units


@compiled(nogil=True, boundscheck=False)
def carried_sums(
    cell: IntArray,
    N: int,
    M: int,
    S: int,
    K: int,
    pk: IntArray,
    level: IntArray,
    mu: FloatArray,
    index: npt.NDArray[np.int32],
    ce: FloatArray,
    min_trial_days: float,
    lead: float,
    r: FloatArray,
    margin: FloatArray,
    margin_row: IntArray,
    shelf: IntArray,
) -> tuple[IntArray, IntArray, FloatArray]:  # pragma: no cover - compiled
    """(live columns, their slot counts, sums (SUMS, live)) over the carried cells (flat indexes, ascending).

    pk, level, mu, shelf: (N * M * S,) flat; index: (N * M * K,) flat; ce: (N * M, P); r, margin_row: (N * M,);
    margin: (price rows, K). A column is run * K + product.
    """
    n_cols = N * K
    count = np.zeros(n_cols, dtype=np.int64)
    for i in range(len(cell)):
        c = cell[i]
        if c < 0 or c >= N * M * S or (i > 0 and c <= cell[i - 1]):
            raise ValueError("the carried cells must be distinct slots, ascending")
        k = pk[c]
        if k < 0 or k >= K or index[(c // S) * K + k] < 0:
            raise ValueError("a carried slot holds no product of the catalog with an entry")
        count[(c // (M * S)) * K + k] += 1
    ids = np.full(n_cols, -1, dtype=np.int64)
    n_live = 0
    for j in range(n_cols):
        if count[j] > 0:
            ids[j] = n_live
            n_live += 1
    live = np.empty(n_live, dtype=np.int64)
    live_count = np.empty(n_live, dtype=np.int64)
    for j in range(n_cols):
        if ids[j] >= 0:
            live[ids[j]] = j
            live_count[ids[j]] = count[j]
    sums = np.zeros((SUMS, n_live))
    for i in range(len(cell)):
        c = cell[i]
        row = c // S
        k = pk[c]
        j = ids[(row // M) * K + k]
        rate = mu[c]
        plan = 0.0 if ce[row, index[row * K + k]] < min_trial_days else rate
        mean = plan * lead
        sums[0, j] += float(level[c])
        sums[1, j] += rate
        sums[2, j] += plan
        sums[3, j] += mean + mean * mean / r[row]
        sums[4, j] += margin[margin_row[row], k]
        sums[5, j] += float(shelf[c])
    return live, live_count, sums
