"""The orders' sums over the machines of a run, compiled: one pass over the carried slots instead of a bincount each.

`orders.place_orders` needs, for every product a run carries somewhere, sums over its machines of the shelf
targets, the rates, the rates to plan on (0 while on trial), the variances over the lead time, the margins and
the shelf units. `np.bincount` adds its weights into their bins one after the other in input order; this adds
the same values in the same order (the carried slots by run, machine and slot, walked in place), so every sum is
the bincount's, to the bit. The products carried nowhere in a run are left out (`live`: run * K + product,
ascending).
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
    active: npt.NDArray[np.bool_],
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
    """(live columns, their slot counts, sums (SUMS, live)) over the carried slots (`active`), run by run.

    active, pk, level, mu, shelf: (N, M, S); index: (N, M, K); ce: (N, M, P); r, margin_row: (N, M); margin:
    (price rows, K). A column is run * K + product.
    """
    N, M, S = active.shape
    K = index.shape[2]
    count = np.zeros(K, dtype=np.int64)  # one run's slots of each product
    n_live = 0
    for n in range(N):  # the columns in use (a run's products carried somewhere)
        count[:] = 0
        for m in range(M):
            for s in range(S):
                if active[n, m, s]:
                    k = pk[n, m, s]
                    if k < 0 or k >= K:
                        raise ValueError("a carried slot holds no product of the catalog")
                    count[k] += 1
        for k in range(K):
            n_live += count[k] > 0
    live = np.empty(n_live, dtype=np.int64)
    live_count = np.empty(n_live, dtype=np.int64)
    sums = np.zeros((n_live, SUMS))  # a column's sums side by side
    ids = np.empty(K, dtype=np.int64)
    j0 = 0
    for n in range(N):
        count[:] = 0
        for m in range(M):
            for s in range(S):
                if active[n, m, s]:
                    count[pk[n, m, s]] += 1
        for k in range(K):  # the run's columns in product order
            if count[k] > 0:
                ids[k] = j0
                live[j0] = n * K + k
                live_count[j0] = count[k]
                j0 += 1
        for m in range(M):
            disp = r[n, m]
            price_row = margin_row[n, m]
            for s in range(S):
                if not active[n, m, s]:
                    continue
                k = pk[n, m, s]
                j = ids[k]
                rate = mu[n, m, s]
                p = index[n, m, k]  # the product's entry at the machine (a far place in a large table)
                if p < 0:
                    raise ValueError("a carried slot's product has no entry at its machine")
                plan = 0.0 if ce[n, m, p] < min_trial_days else rate
                mean = plan * lead
                sums[j, 0] += float(level[n, m, s])
                sums[j, 1] += rate
                sums[j, 2] += plan
                sums[j, 3] += mean + mean * mean / disp
                sums[j, 4] += margin[price_row, k]
                sums[j, 5] += float(shelf[n, m, s])
    return live, live_count, np.ascontiguousarray(sums.T)
