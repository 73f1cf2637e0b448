"""`Est.slot_mu`'s walks over the slots, compiled.

The day's rates of the slots as the day began, and the rates of rows' slots as they are now (the products placed
since are handed back, to be worked out by `Est.mu`).

The values are the numpy form's: the carried products' `attr` (kept from `_share_scale`) times the machine's
scale, 0.0 for an empty slot (`tests/agents/test_array_baseline_sums.py` holds them to it bit for bit).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@compiled(nogil=True, boundscheck=False)
def day_rates(
    pk: IntArray, carried_k: IntArray, carried_attr: FloatArray, scale: FloatArray, out: FloatArray
) -> IntArray:  # pragma: no cover - compiled
    """out = carried_attr x scale[n, m] where a slot holds its carried product, 0.0 where it holds none.

    Returns the flat slots holding another product (their rates to work out), in slot order.
    """
    N, M, S = pk.shape
    C = 0
    for n in range(N):
        for m in range(M):
            for s in range(S):
                k = pk[n, m, s]
                if k < 0:
                    out[n, m, s] = 0.0
                elif carried_k[n, m, s] == k:
                    out[n, m, s] = carried_attr[n, m, s] * scale[n, m]
                else:
                    C += 1
    new = np.empty(C, dtype=np.int64)
    c = 0
    for n in range(N):
        for m in range(M):
            for s in range(S):
                k = pk[n, m, s]
                if k >= 0 and carried_k[n, m, s] != k:
                    new[c] = (n * M + m) * S + s
                    c += 1
    return new


@compiled(nogil=True, boundscheck=False)
def row_rates(
    n: IntArray, m: IntArray, pk: IntArray, slot_k: IntArray, slot_mu: FloatArray, out: FloatArray
) -> IntArray:  # pragma: no cover - compiled
    """out[r] = the kept rates of row r's slots (machine m[r] of run n[r]; 0.0 where empty).

    Returns the flat (r * S + s) slots whose product changed since the rates were kept, in order.
    """
    S = pk.shape[2]
    C = 0
    for r in range(len(n)):
        a, b = n[r], m[r]
        for s in range(S):
            k = pk[a, b, s]
            if k >= 0:
                out[r, s] = slot_mu[a, b, s]
                if k != slot_k[a, b, s]:
                    C += 1
            else:
                out[r, s] = 0.0
    moved = np.empty(C, dtype=np.int64)
    c = 0
    for r in range(len(n)):
        a, b = n[r], m[r]
        for s in range(S):
            k = pk[a, b, s]
            if k >= 0 and k != slot_k[a, b, s]:
                moved[c] = r * S + s
                c += 1
    return moved
