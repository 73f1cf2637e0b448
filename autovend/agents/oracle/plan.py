"""The oracle's plan: per machine, the price, assortment and shelf targets that earn the most expected gross profit.

Everything here is a pure function of the world's *hidden* demand model (privileged: see
`autovend.agents.oracle`). Expected demand is eq. (2)-(3) at the neutral shock (xi = 1, its mean) and
neutral weather, with the site's calendar factor: a product k on machine m sells at the rate
U w_k / (U + W), w_k = b_mk F^eta min(1, q_k / phi) (p_k / p_ref,k)^(-eps_m) E_mk.

- **Assortment** (`best_assortment`): for a price multiplier p and a number n of products, the set that
  maximises U sum_S w_k m_k / (U + sum_S w_k) (m_k = unit margin at p) among sets of n, found exactly by
  bisection on the value theta: a set reaches theta iff sum_S w_k (U m_k - theta) >= theta U, so the best set
  for theta is the n products with the largest positive w_k (U m_k - theta).
- **Targets** (`shelf_targets`): every product carried gets at least phi units (full attraction) and the rest
  of the capacity in proportion to its rate, so the products run down together.
- **Cycle** (`fluid_sales`): the shelf is run down day by day with expected sales E[min(D, q)] (approximated
  by r (1 - exp(-q / r)) for demand rate r and q units), and a plan's value is its gross profit over a
  visit cycle less one visit fee, per day. `plan_machine` searches p, n and the cycle for the best value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MULTIPLIERS = tuple(round(1.0 + 0.1 * i, 2) for i in range(11))  # 1.0 .. 2.0, cut to the price band
CYCLES = (1, 2, 3, 4, 5, 7, 10, 14)  # candidate days between visits
BISECTION_STEPS = 50
EXPIRY_MARGIN_DAYS = 14  # a product whose shelf target lasts longer than its shelf life less this is not carried


@dataclass(frozen=True)
class MachinePlan:
    """What the oracle does with one machine (product indices refer to the catalog's order)."""

    multiplier: float  # prices = multiplier x reference price, for every product carried
    target: IntArray  # (K,) shelf units after a visit (0 = not carried)
    rate: FloatArray  # (K,) expected units a day at the target shelf (0 = not carried)
    cycle: int  # the planned days between visits (visits are decided day by day: `autovend.agents.oracle.agent`)
    value_per_day: float  # expected gross profit per day over a cycle, less the visit fee


def expected_sales(rate: FloatArray, units: FloatArray) -> FloatArray:
    """E[min(D, q)] for D ~ Poisson(rate), approximated by rate (1 - exp(-q / rate)) (q where rate is 0: 0)."""
    safe = np.maximum(rate, 1e-12)
    return np.where(rate > 0, rate * -np.expm1(-np.maximum(units, 0.0) / safe), 0.0)


def rates(
    b_eff: FloatArray, U: float, capacity: float, q: FloatArray, env: float | FloatArray, phi: float, eta: float
) -> FloatArray:
    """Expected demand of each product (K,) on a shelf holding q (b_eff: attraction at the prices, neutral E)."""
    fill = min(1.0, float(q.sum()) / capacity) ** eta
    w = b_eff * fill * np.minimum(1.0, q / phi) * env
    W = float(w.sum())
    return w * (U / (U + W)) if W > 0 else np.zeros_like(w)


def fluid_sales(
    b_eff: FloatArray,
    U: float,
    capacity: float,
    q0: npt.ArrayLike,
    env_days: Sequence[float | FloatArray],
    phi: float,
    eta: float,
) -> tuple[FloatArray, FloatArray]:
    """Expected sales (days, K) over the days of `env_days` (calendar factors) from shelf q0, and the shelf after."""
    q = np.asarray(q0, dtype=float).copy()
    out = np.zeros((len(env_days), len(q)))
    for i, env in enumerate(env_days):
        sold = expected_sales(rates(b_eff, U, capacity, q, env, phi, eta), q)
        out[i] = sold
        q -= sold
    return out, q


def best_assortment(w: FloatArray, margin: FloatArray, U: float, n: int, allowed: npt.NDArray[np.bool_]) -> IntArray:
    """The n allowed products (or fewer) maximising U sum w m / (U + sum w) (see the module docstring)."""
    w = np.where(allowed, w, 0.0)
    lo, hi = 0.0, float(U * max(margin.max(), 0.0))
    best = np.zeros(0, dtype=np.int64)
    for _ in range(BISECTION_STEPS):
        theta = 0.5 * (lo + hi)
        v = w * (U * margin - theta)
        top = np.argpartition(-v, min(n, len(v) - 1))[:n]
        top = top[v[top] > 0]
        if len(top) and float(v[top].sum()) >= theta * U:
            lo, best = theta, top
        else:
            hi = theta
    return np.sort(best)


def shelf_targets(rate: FloatArray, skus: IntArray, capacity: int, phi: float) -> IntArray:
    """Units of each product after a visit: at least ceil(phi) each, the rest of the capacity by rate (K,)."""
    K = len(rate)
    out = np.zeros(K, dtype=np.int64)
    n = len(skus)
    if n == 0:
        return out
    base = math.ceil(phi)
    if n * base >= capacity:
        out[skus] = capacity // n
        return out
    r = rate[skus] / max(float(rate[skus].sum()), 1e-12)
    # the largest lambda with sum(max(base, lambda r)) <= capacity, by bisection, then the remainder by size
    lo, hi = 0.0, float(capacity) / max(float(r.min()), 1e-12)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if np.maximum(base, mid * r).sum() <= capacity:
            lo = mid
        else:
            hi = mid
    raw = np.maximum(base, lo * r)
    q = np.floor(raw).astype(np.int64)
    left = capacity - int(q.sum())
    if left > 0:
        order = np.argsort(-(raw - q), kind="stable")[:left]
        q[order] += 1
    out[skus] = q
    return out


@dataclass(frozen=True)
class MachineModel:
    """The hidden demand of one machine and the catalog's money, as the plan reads them."""

    b: FloatArray  # (K,) base attraction
    U: float
    elasticity: float
    capacity: int
    ref: FloatArray  # (K,) reference prices
    cost: FloatArray  # (K,) unit costs
    life: IntArray  # (K,) shelf life, days
    env: float  # the site's mean calendar factor over a week
    phi: float
    eta: float


def _price(ref: FloatArray, mult: float) -> FloatArray:
    """Prices at `mult` x reference, rounded to the fen as the tools take them."""
    return np.round(ref * mult, 2)


def plan_machine(mm: MachineModel, fee: float, band: tuple[float, float], sizes: Sequence[int]) -> MachinePlan:
    """The best plan of one machine over the multipliers in the band, assortment sizes and visit cycles."""
    best: MachinePlan | None = None
    allowed = mm.b > 0
    for mult in (m for m in MULTIPLIERS if band[0] <= m <= band[1]):
        price = _price(mm.ref, mult)
        margin = price - mm.cost
        b_eff = mm.b * np.power(price / mm.ref, -mm.elasticity)
        for n in sizes:
            ok = allowed & (margin > 0)
            skus = best_assortment(b_eff * mm.env, margin, mm.U, n, ok)
            for _ in range(2):  # products that would expire on the shelf are left out, once
                q_full = np.zeros(len(mm.b))
                q_full[skus] = mm.phi
                rate = rates(b_eff, mm.U, mm.capacity, q_full, mm.env, mm.phi, mm.eta)
                target = shelf_targets(rate, skus, mm.capacity, mm.phi)
                cover = target[skus] / np.maximum(rate[skus], 1e-9)
                stale = skus[cover > mm.life[skus] - EXPIRY_MARGIN_DAYS]
                if len(stale) == 0:
                    break
                ok = ok.copy()
                ok[stale] = False
                skus = best_assortment(b_eff * mm.env, margin, mm.U, n, ok)
            if len(skus) == 0:
                continue
            sold, _ = fluid_sales(b_eff, mm.U, mm.capacity, target, [mm.env] * max(CYCLES), mm.phi, mm.eta)
            gp = (sold * margin).sum(axis=1).cumsum()
            for c in CYCLES:
                value = (float(gp[c - 1]) - fee) / c
                if best is None or value > best.value_per_day:
                    rate_at_target = sold[:c].mean(axis=0)
                    best = MachinePlan(mult, target, rate_at_target, c, value)
    if best is None:
        K = len(mm.b)
        return MachinePlan(1.0, np.zeros(K, dtype=np.int64), np.zeros(K), max(CYCLES), 0.0)
    return best
