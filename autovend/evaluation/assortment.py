"""Assortment quality and site coordination: product mixes valued under one standard display.

The standard display puts `display_units(capacity, n)` units of each of the n products of a mix on the
machine (phi units, the facing threshold, unless the capacity cannot hold that many), at reference
prices, under the machine's mean environment over a window of days, at the neutral shock. The
value of a mix at a machine is its expected gross profit on that display (`ShelfEconomics`).

The heuristic reference mix of n products at a machine ranks every catalog product by the expected
gross profit of its own facing on that display, E[min(D_k, v)] * (ref_k - c_k), with D_k's rate
taken as if the mix were made of the n most attractive products; it keeps the n best.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

from autovend.demand.kernel import attraction
from autovend.evaluation.economics import ShelfEconomics, expected_sales
from autovend.evaluation.shelves import ShelfPanel

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def display_units(capacity: int, n: int, phi: float) -> int:
    """Units per product of the standard display of n products: ceil(phi), or capacity // n if less (>= 1)."""
    if n <= 0:
        return 0
    return max(1, min(math.ceil(phi), int(capacity) // n))


def mixes_on(panel: ShelfPanel, day: int, n_machines: int) -> list[IntArray]:
    """Each machine's assortment on `day`: the products with a unit on its shelf at demand time."""
    return [panel.product[panel.rows(day, m)].copy() for m in range(n_machines)]


def mix_values(
    econ: ShelfEconomics, machines: Sequence[int], mixes: Sequence[IntArray], window: tuple[int, int]
) -> FloatArray:
    """Expected gross profit of mix r on the standard display at machine r, for every r (empty mix: 0)."""
    machines = np.asarray(machines, dtype=np.int64)
    width = max([len(x) for x in mixes], default=0)
    R = len(mixes)
    if R == 0:
        return np.zeros(0)
    product = np.zeros((R, max(width, 1)), dtype=np.int64)
    q = np.zeros((R, max(width, 1)), dtype=np.int64)
    cap = econ.inputs.capacity[machines]
    for r, mix in enumerate(mixes):
        n = len(mix)
        product[r, :n] = mix
        q[r, :n] = display_units(int(cap[r]), n, econ.inputs.phi)
    env = econ.mean_env(window[0], window[1], machines, product)
    price = econ.ref_price[product]
    return econ.gross_profit(machines, product, q, price, env)


def reference_mix(econ: ShelfEconomics, machine: int, n: int, window: tuple[int, int]) -> IntArray:
    """The heuristic reference mix of `n` products at `machine` (see the module docstring), best first."""
    K = len(econ.ref_price)
    n = min(int(n), K)
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    cap = float(econ.inputs.capacity[machine])
    v = display_units(int(cap), n, econ.inputs.phi)
    allk = np.arange(K, dtype=np.int64)[None, :]
    env = econ.mean_env(window[0], window[1], [machine], allk)
    # Every product at v units; the kernel's fill term must see the n-product display (n * v units),
    # so the capacity is scaled by K / n: (K * v) / (cap * K / n) = n * v / cap.
    w = attraction(
        econ.inputs.b[machine][None, :],
        np.full((1, K), v),
        np.array([cap * K / n]),
        eta=econ.inputs.eta,
        phi=econ.inputs.phi,
        env=env,
    )[0]
    top_w = np.sort(w)[::-1][:n].sum()
    U = econ.inputs.U[machine]
    lam = w * (U / (U + top_w))  # eq. (3)'s split of demand, with W = the attraction of the top n products
    score = expected_sales(lam, v) * (econ.ref_price - econ.unit_cost)
    order = np.lexsort((allk[0], -score))
    return order[:n].astype(np.int64)


def assortment_scores(
    econ: ShelfEconomics, mixes: Sequence[IntArray], window: tuple[int, int]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(score, agent value, reference value) per machine; NaN score where the shelf is empty."""
    M = len(mixes)
    refs = [reference_mix(econ, m, len(mixes[m]), window) for m in range(M)]
    values = mix_values(econ, np.arange(M), mixes, window)
    ref_values = mix_values(econ, np.arange(M), refs, window)
    score = np.full(M, np.nan)
    ok = (ref_values > 0) & np.array([len(x) > 0 for x in mixes])
    score[ok] = values[ok] / ref_values[ok]
    return score, values, ref_values


def reassignment_matrix(econ: ShelfEconomics, mixes: Sequence[IntArray], window: tuple[int, int]) -> FloatArray:
    """V[i, j]: expected gross profit of machine j's mix on the standard display at machine i."""
    M = len(mixes)
    ii, jj = np.meshgrid(np.arange(M), np.arange(M), indexing="ij")
    values = mix_values(econ, ii.ravel(), [mixes[j] for j in jj.ravel()], window)
    return values.reshape(M, M)


def reassignment_gap(V: FloatArray) -> tuple[float, float, float]:
    """(gap, actual, best): the actual assignment is the diagonal, the best one the optimal permutation.

    gap = (best - actual) / best; NaN when the best is not positive.
    """
    rows, cols = linear_sum_assignment(V, maximize=True)
    best = float(V[rows, cols].sum())
    actual = float(np.trace(V))
    gap = (best - actual) / best if best > 0 else float("nan")
    return gap, actual, best
