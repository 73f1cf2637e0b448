"""The pooled index's sums over every entry of every run, compiled: three passes instead of a dozen numpy ones.

`estimate._pooled_index` is the baseline's `pooled_index` for N runs from their entries (run, machine, product,
sorted that way). Its sums over the entries (a machine's units, a site x category's relative units and exposure,
a product's adjusted units and exposure over the machines) are `np.bincount`s in entry order; this adds the
same values in the same order, with the same arithmetic between them, so every value is numpy's to the bit.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@compiled(nogil=True, boundscheck=False)
def pooled_sums(
    n: IntArray,
    m: IntArray,
    k: IntArray,
    cu: FloatArray,
    ce: FloatArray,
    ce_row: FloatArray,
    site: IntArray,
    l1: IntArray,
    n_site: int,
    n_l1: int,
    M: int,
    K: int,
    N: int,
    fallback: float,
    site_prior: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:  # pragma: no cover - compiled
    """(f (N * sites * categories,), adjusted units (N * K,), exposure (N * K,)) from the entries.

    cu, ce: each entry's units and exposure-days; ce_row: (N * M,) each machine's exposure (numpy's sum over
    its catalog row); site: (M,) each machine's site type; l1: (K,) each product's category.
    """
    E = len(n)
    n_sl = n_site * n_l1
    cu_row = np.zeros(N * M)
    for e in range(E):
        if not (0 <= n[e] < N and 0 <= m[e] < M and 0 <= k[e] < K):
            raise ValueError("an entry's run, machine or product is out of range")
        cu_row[n[e] * M + m[e]] += cu[e]
    level = np.empty(N * M)  # max(base_cum, 1e-9)
    for i in range(N * M):
        c = ce_row[i]
        b = cu_row[i] / (c if c > 1e-9 or c != c else 1e-9) if c > 0 else fallback
        level[i] = b if b > 1e-9 or b != b else 1e-9
    rel = np.empty(E)
    f_num = np.zeros(N * n_sl)
    f_den = np.zeros(N * n_sl)
    for e in range(E):
        rel[e] = cu[e] / level[n[e] * M + m[e]]
        g = n[e] * n_sl + site[m[e]] * n_l1 + l1[k[e]]
        f_num[g] += rel[e]
        f_den[g] += ce[e]
    f = (f_num + site_prior) / (f_den + site_prior)
    adj_k = np.zeros(N * K)
    ce_k = np.zeros(N * K)
    for e in range(E):
        g = n[e] * n_sl + site[m[e]] * n_l1 + l1[k[e]]
        col = n[e] * K + k[e]
        adj_k[col] += rel[e] / f[g]
        ce_k[col] += ce[e]
    return f, adj_k, ce_k


@compiled(nogil=True, boundscheck=False)
def machine_sums(
    row: IntArray, flat: IntArray, wu: IntArray, we: FloatArray, units: FloatArray, expo: FloatArray
) -> None:  # pragma: no cover - compiled
    """units[row] += wu[flat], expo[row] += we[flat], entry after entry.

    What `np.bincount(row, weights=...)` gives for the gathered window sums (the weights as float64, added in entry
    order), without gathering them first.
    """
    for i in range(len(row)):
        r, f = row[i], flat[i]
        units[r] += np.float64(wu[f])
        expo[r] += we[f]
