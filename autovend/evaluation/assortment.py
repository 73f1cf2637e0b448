"""Assortment quality and site coordination: product mixes valued under one standard display.

The standard display puts `display_units(capacity, n)` units of each of the n products of a mix on the
machine (phi units, the facing threshold, unless the capacity cannot hold that many), at reference
prices, under the machine's mean environment over a window of days, at the neutral shock. The
value of a mix at a machine is its expected gross profit on that display (`ShelfEconomics`).

The reference mix of n products at a machine is the best mix of n products on that display found
by a ratio (Dinkelbach) iteration. On the display every product k has a fixed attraction w_k and
margin m_k = ref_k - c_k; the machine's demand is split as s * w_k with s = U / (U + W), so the
display earns G = U * sum_k N_k / (U + sum_k w_k), with N_k = E[min(s w_k, v)] m_k / s (= w_k m_k
when nothing sells out). Starting from the n products with the largest w_k m_k, each round keeps
the n largest N_k - rho w_k, rho = G / U of the current mix, while G improves; when it stops
improving, the best exact swap between the 8 weakest products of the mix and the 8 strongest
outside it is made, if it helps, and the rounds go on. Without sell-outs the ratio step alone is
the exact optimum (a linear-fractional problem with a cardinality constraint); with them the
result is a close heuristic (on the test worlds no single swap improves it). Since a machine's
purchases are capped near U once its shelf is attractive, the best mix favours products whose
margin exceeds the shelf's average gross profit per purchase, not the most attractive ones.
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
    econ: ShelfEconomics, machines: npt.ArrayLike, mixes: Sequence[IntArray], window: tuple[int, int]
) -> FloatArray:
    """Expected gross profit of mix r on the standard display at machine r, for every r (empty mix: 0)."""
    at = np.asarray(machines, dtype=np.int64)
    width = max([len(x) for x in mixes], default=0)
    R = len(mixes)
    if R == 0:
        return np.zeros(0)
    product = np.zeros((R, max(width, 1)), dtype=np.int64)
    q = np.zeros((R, max(width, 1)), dtype=np.int64)
    cap = econ.model.capacity[at]
    for r, mix in enumerate(mixes):
        n = len(mix)
        product[r, :n] = mix
        q[r, :n] = display_units(int(cap[r]), n, econ.model.settings.phi)
    env = econ.mean_env(window[0], window[1], at, product)
    price = econ.ref_price[product]
    return econ.gross_profit(at, product, q, price, env)


SWAP_POOL = 8  # products on each side of the exact swap polish of the reference mix


def _top(score: FloatArray, n: int) -> IntArray:
    """Indexes of the n largest scores, best first (ties: lower index first)."""
    order = np.lexsort((np.arange(len(score)), -score))
    return order[:n].astype(np.int64)


def reference_mix(
    econ: ShelfEconomics, machine: int, n: int, window: tuple[int, int], max_rounds: int = 50
) -> IntArray:
    """The reference mix of `n` products at `machine` (see the module docstring), as sorted indexes."""
    K = len(econ.ref_price)
    n = min(int(n), K)
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    cap = float(econ.model.capacity[machine])
    v = display_units(int(cap), n, econ.model.settings.phi)
    allk = np.arange(K, dtype=np.int64)[None, :]
    env = econ.mean_env(window[0], window[1], [machine], allk)
    # Every product at v units; the kernel's fill term must see the n-product display (n * v units),
    # so the capacity is scaled by K / n: (K * v) / (cap * K / n) = n * v / cap.
    w = attraction(
        econ.model.b[machine][None, :],
        np.full((1, K), v),
        np.array([cap * K / n]),
        eta=econ.model.settings.eta,
        phi=econ.model.settings.phi,
        env=env,
    )[0]
    U = float(econ.model.U[machine])
    margin = econ.ref_price - econ.unit_cost

    def values(mixes: IntArray) -> FloatArray:
        """Expected gross profit of each row of `mixes` (R, n) on the display (eq. (3): demand s w_k)."""
        wm = w[mixes]
        s = U / (U + wm.sum(axis=1))
        return np.sum(expected_sales(s[:, None] * wm, v) * margin[mixes], axis=1)

    mix = _top(w * margin, n)
    best = float(values(mix[None, :])[0])
    for _ in range(max_rounds):
        # G = s * sum_k N_k(s) with N_k(s) = E[min(s w_k, v)] m_k / s and s = U / (U + W): a ratio
        # U * sum N_k / (U + sum w_k). For rho = G / U, the best mix of n products by the linearised
        # objective sum_k (N_k - rho w_k) is the top n of N_k - rho w_k (Dinkelbach).
        s = U / (U + float(w[mix].sum()))
        score = expected_sales(s * w, v) * margin / s - (best / U) * w
        candidate = _top(score, n)
        val = float(values(candidate[None, :])[0])
        if val > best * (1 + 1e-12):
            mix, best = candidate, val
            continue
        # Polish where products sell out: the best exact swap among the SWAP_POOL weakest products in
        # the mix and the SWAP_POOL strongest outside it (by the same score).
        inside = mix[np.argsort(score[mix], kind="stable")[:SWAP_POOL]]
        out_mask = np.ones(K, dtype=bool)
        out_mask[mix] = False
        outside = np.flatnonzero(out_mask)
        outside = outside[np.argsort(-score[outside], kind="stable")[:SWAP_POOL]]
        if len(outside) == 0:
            break
        pairs = [(i, o) for i in inside.tolist() for o in outside.tolist()]
        trials = np.array([np.where(mix == i, o, mix) for i, o in pairs])
        trial_values = values(trials)
        j = int(np.argmax(trial_values))
        if trial_values[j] <= best * (1 + 1e-12):
            break
        mix, best = trials[j], float(trial_values[j])
    return np.sort(mix)


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
    values = mix_values(econ, ii.ravel(), [mixes[j] for j in jj.ravel().tolist()], window)
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
