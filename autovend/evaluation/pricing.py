"""The price-search reference of the pricing-regret metric: better prices for a fixed shelf.

For one machine-day the shelf (products and units), the site and the day's environment are fixed;
only prices move, each within its band, on a grid of multiples of the reference price (`grid`).
The search keeps the best expected gross profit (`ShelfEconomics`, neutral shock) found among:

1. the agent's own prices (so the reference is never worse than the agent);
2. one common level: every product at the same multiple of its reference price, for every grid step;
3. rounds of per-product best responses from the best of 1-2: with the machine's purchase scale
   s = U / (U + W) and the marginal value of attraction held at their current values, each product
   takes the grid price that maximises its own expected gross profit plus the value its attraction
   takes from (or gives to) the other products; a round is kept only if the exact expected gross
   profit of the whole shelf improves, and the search stops at the first round that does not.

Step 3 is a coordinate search on the first-order conditions of the joint problem: the derivative of
the shelf's gross profit in p_k is that of product k's own term plus dG/ds * ds/dW * dw_k/dp_k, and
dG/ds * ds/dW is the common "shadow value" of attraction used for every product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.evaluation.economics import ShelfEconomics, expected_sales, expected_sales_and_slope

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class PriceSearch:
    """Result per machine-day (R,): the agent's and the reference's expected gross profit, and how found.

    reference_price: (R, S) the reference's prices; level: the best common multiple; rounds: the
    best-response rounds that improved the shelf.
    """

    agent: FloatArray
    reference: FloatArray
    best_level: FloatArray
    reference_price: FloatArray
    level: FloatArray
    rounds: IntArray

    @property
    def regret(self) -> FloatArray:
        """Reference minus agent expected gross profit (>= 0), CNY per machine-day."""
        return self.reference - self.agent


def grid(band: tuple[float, float], step: float) -> FloatArray:
    """Multiples of the reference price from band[0] to band[1] in `step`s (both ends included)."""
    n = int(np.floor((band[1] - band[0]) / step + 1e-9)) + 1
    out = band[0] + step * np.arange(n)
    if out[-1] < band[1] - 1e-9:
        out = np.append(out, band[1])
    return np.round(out, 10)


class _Shelves:
    """The fixed part of a batch of machine-days: attraction at reference prices, margins, bands."""

    def __init__(
        self,
        econ: ShelfEconomics,
        machine: IntArray,
        product: IntArray,
        q: IntArray,
        env: FloatArray,
    ) -> None:
        self.q = np.asarray(q, dtype=float)
        self.live = self.q > 0
        self.a = econ.base_attraction(machine, product, q, env)  # w at reference prices
        self.ref = econ.ref_price[product]
        self.cost = econ.unit_cost[product]
        self.lo = econ.price_lo[product]
        self.hi = econ.price_hi[product]
        self.eps = econ.model.elasticity[machine]
        self.U = econ.model.U[machine]

    def attraction(self, price: FloatArray, rows: IntArray | slice = slice(None)) -> FloatArray:
        """w at `price` for the given rows; `price` may carry a trailing grid axis."""
        extra = price.ndim - 2
        shape = (-1,) + (1,) * (1 + extra)
        ratio = price / self.ref[rows].reshape(self.ref[rows].shape + (1,) * extra)
        w = self.a[rows].reshape(self.a[rows].shape + (1,) * extra) * np.power(ratio, -self.eps[rows].reshape(shape))
        return w

    def value(self, price: FloatArray, rows: IntArray | slice = slice(None)) -> FloatArray:
        """Exact expected gross profit of each row at `price` (R, S)."""
        w = self.attraction(price, rows)
        U = self.U[rows]
        s = U / (U + w.sum(axis=1))
        lam = w * s[:, None]
        return np.sum(expected_sales(lam, self.q[rows]) * (price - self.cost[rows]), axis=1)

    def grid_prices(self, levels: FloatArray, rows: IntArray | slice = slice(None)) -> FloatArray:
        """(R, S, G) candidate prices: each level x reference price, rounded to the fen, within the band."""
        p = np.round(self.ref[rows][..., None] * levels, 2)
        return np.clip(p, self.lo[rows][..., None], self.hi[rows][..., None])


def search_prices(
    econ: ShelfEconomics,
    machine: npt.ArrayLike,
    product: npt.ArrayLike,
    q: npt.ArrayLike,
    price: npt.ArrayLike,
    env: npt.ArrayLike,
    levels: FloatArray,
    max_rounds: int = 12,
) -> PriceSearch:
    """Search better prices for each machine-day row (see the module docstring)."""
    machine = np.asarray(machine, dtype=np.int64)
    product = np.asarray(product, dtype=np.int64)
    agent_price = np.asarray(price, dtype=float)
    sh = _Shelves(econ, machine, product, np.asarray(q), np.asarray(env, dtype=float))
    R = len(machine)
    agent = sh.value(agent_price)
    cand = sh.grid_prices(levels)  # (R, S, G)
    per_level = np.stack([sh.value(cand[:, :, g]) for g in range(len(levels))], axis=1)  # (R, G)
    g_best = np.argmax(per_level, axis=1)
    best_level = per_level[np.arange(R), g_best]
    use_level = best_level > agent
    current = np.where(use_level[:, None], cand[np.arange(R), :, g_best], agent_price)
    value = np.maximum(best_level, agent)
    rounds = np.zeros(R, dtype=np.int64)
    active = np.flatnonzero(sh.live.sum(axis=1) > 1)  # one product: the level search is already exact
    for _ in range(max_rounds):
        if len(active) == 0:
            break
        new = _best_response(sh, current[active], cand[active], active)
        new_value = sh.value(new, active)
        better = new_value > value[active] + 1e-9
        idx = active[better]
        current[idx] = new[better]
        value[idx] = new_value[better]
        rounds[idx] += 1
        active = idx
    return PriceSearch(
        agent=agent,
        reference=value,
        best_level=best_level,
        reference_price=current,
        level=levels[g_best],
        rounds=rounds,
    )


def _best_response(sh: _Shelves, price: FloatArray, cand: FloatArray, rows: IntArray) -> FloatArray:
    """One round: every product's best grid price given the current scale and shadow value of attraction."""
    w = sh.attraction(price, rows)
    U = sh.U[rows]
    W = w.sum(axis=1)
    s = U / (U + W)
    q = sh.q[rows]
    cost = sh.cost[rows]
    _, slope = expected_sales_and_slope(w * s[:, None], q)
    dG_ds = np.sum(w * slope * (price - cost), axis=1)
    shadow = dG_ds * (-(s**2) / U)  # dG/dW: ds/dW = -U / (U + W)^2 = -s^2 / U
    wg = sh.attraction(cand, rows)  # (R, S, G)
    own = expected_sales(wg * s[:, None, None], q[..., None]) * (cand - cost[..., None])
    total = own + shadow[:, None, None] * wg
    pick = np.argmax(total, axis=2)
    new = np.take_along_axis(cand, pick[..., None], axis=2)[..., 0]
    return np.where(sh.live[rows], new, price)
