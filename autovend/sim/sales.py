"""One day's demand and sales on the shelves (`DayDemand`, `sell`) and the agent's per-machine view of it.

Demand is realised on the shelves and prices in force at the end of the day; sales take the
earliest-expiring units of each shelf (expired units sit in front and leave first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.demand.model import DemandModel
from autovend.sim import inventory as inv
from autovend.sim.demand import demand_uniforms
from autovend.sim.facts import IntArray, WorldFacts
from autovend.sim.state import SimState

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class DayDemand:
    """One day's demand and sales on the stocked block: arrays are (len(rows), len(cols))."""

    day: int
    rows: IntArray  # machines with at least one unit on the shelf
    cols: IntArray  # products with at least one unit on some shelf
    q: IntArray  # shelf units when demand was realised
    prices: IntArray  # prices in force (fen)
    rates: FloatArray  # expected demand
    demand: IntArray
    sales: IntArray
    expired_sold: IntArray
    revenue: IntArray  # fen
    cogs: IntArray  # fen, unexpired units sold at cost
    units_before: IntArray  # (M,) all machines
    expired_before: IntArray  # (M,)

    def per_machine(self, x: np.ndarray) -> np.ndarray:
        """Row sums of a block array spread to all M machines (zeros where nothing stood)."""
        out = np.zeros(len(self.units_before), dtype=x.dtype)
        out[self.rows] = x.sum(axis=1)
        return out


@dataclass(eq=False)
class DayDraw:
    """Day `day`'s demand inputs on the stocked block, before sales: what `sell` computes first.

    Kept apart so that many simulators' draws can be sampled in one pass (`sample_draws`); `demand` is
    None until sampled.
    """

    day: int
    rows: IntArray
    cols: IntArray
    q: IntArray
    prices: IntArray
    rates: FloatArray
    uniforms: FloatArray
    units_before: IntArray
    expired_before: IntArray
    demand: IntArray | None = None


def draw_day(facts: WorldFacts, state: SimState, d: int) -> DayDraw:
    """Day `d`'s expected demand and uniforms on the shelves and prices of `state` (nothing changes).

    Only the stocked block (machines with any unit x products on any shelf) is computed: a
    product with no unit has no attraction and no demand, and F counts all units either way.
    Uniforms are drawn for every product so that each product keeps its own draw.
    """
    s = state
    units_before = s.shelf_n.copy()
    expired_before = _expired_per_machine(facts, s, d)
    rows = np.flatnonzero(units_before > 0)
    cols = np.flatnonzero(s.shelf_q[rows].any(axis=0))
    block = np.ix_(rows, cols)
    qb = s.shelf_q[block]
    prices = s.price_fen[block]
    rates = _expected(facts, s, d, rows, cols, qb, prices)
    uniforms = demand_uniforms(s.seed, d, rows, facts.n_products, facts.n_machines, cols)
    return DayDraw(d, rows, cols, qb, prices, rates, uniforms, units_before, expired_before)


def sample_draws(draws: Sequence[DayDraw]) -> None:
    """Sample the demand of every draw in one pass, of any simulators and worlds.

    Each product's draw depends only on its own rate and uniform (`DemandModel.sample`), so this is
    the same as sampling the draws one by one.
    """
    todo = [x for x in draws if x.demand is None]
    if not todo:
        return
    rates = np.concatenate([x.rates.ravel() for x in todo])
    uniforms = np.concatenate([x.uniforms.ravel() for x in todo])
    demand = DemandModel.sample(rates, uniforms)
    start = 0
    for x in todo:
        n = x.rates.size
        x.demand = demand[start : start + n].reshape(x.rates.shape)
        start += n


def sell(facts: WorldFacts, state: SimState, d: int, draw: DayDraw | None = None) -> DayDemand:
    """Realise day `d`'s demand and take the sales off the shelves of `state`.

    `draw`: the day's draw made on this same state (`draw_day`), sampled or not; None: made here.
    """
    s = state
    x = draw_day(facts, s, d) if draw is None else draw
    if x.demand is None:
        sample_draws([x])
    assert x.demand is not None
    rows, cols, qb, prices, demand = x.rows, x.cols, x.q, x.prices, x.demand
    block = np.ix_(rows, cols)
    sales = np.minimum(demand, qb)
    exp_sold = _take_sold_units(facts, s, d, rows, cols, sales)
    s.shelf_q[block] -= sales
    s.shelf_n[rows] -= sales.sum(axis=1)
    return DayDemand(
        day=d,
        rows=rows,
        cols=cols,
        q=qb,
        prices=prices,
        rates=x.rates,
        demand=demand,
        sales=sales,
        expired_sold=exp_sold,
        revenue=sales * prices,
        cogs=(sales - exp_sold) * facts.cost_fen[cols],
        units_before=x.units_before,
        expired_before=x.expired_before,
    )


def _expired_per_machine(facts: WorldFacts, s: SimState, d: int) -> IntArray:
    """(M,) expired units on each machine's shelves on day `d`."""
    out = np.zeros(facts.n_machines, dtype=np.int64)
    if s.shelf_book.expired(d)[0]:  # walk the shelves only when some expired unit is on one
        for (m, _), b in s.shelves.items():
            if b[0][0] <= d:
                out[m] += inv.expired(b, d)
    return out


def _expected(
    facts: WorldFacts, s: SimState, d: int, rows: IntArray, cols: IntArray, qb: IntArray, prices: IntArray
) -> FloatArray:
    """Expected demand on the block under day `d`'s weather, the prices in force and the machines' shocks."""
    t_max, precip, day_type = facts.days.weather(d)
    env = facts.demand.environment(t_max, precip, day_type, rows, cols)  # the same values as E[ix_(rows, cols)]
    ratio = prices / facts.ref_fen[cols]
    rates = facts.demand.expected(qb, ratio, env, s.xi[rows, d - 1], rows, cols)
    factors = facts.demand_factors(d)  # the world's demand shifts and breakdowns (`autovend.world.conditions`)
    if factors is not None:
        rates = rates * factors[rows][:, facts.demand.category_index[cols]]
    return rates


def _take_sold_units(
    facts: WorldFacts, s: SimState, d: int, rows: IntArray, cols: IntArray, sales: IntArray
) -> IntArray:
    """Take the sold units off the shelf batches (earliest first) and the shelf book; the expired units sold."""
    exp_sold = np.zeros_like(sales)
    ii, jj = np.nonzero(sales)
    shelves = s.shelves
    unit_cost = facts.unit_cost
    sold_units: dict[int, int] = {}  # by expiry day, booked out of the shelf book after the loop
    sold_cost: dict[int, int] = {}
    for i, j, m, k, n in zip(
        ii.tolist(), jj.tolist(), rows[ii].tolist(), cols[jj].tolist(), sales[ii, jj].tolist(), strict=True
    ):
        b = shelves[(m, k)]
        front = b[0]
        e = front[0]
        if e > d and front[1] >= n:  # the common case: the front batch is fresh and covers the sale
            if front[1] > n:
                front[1] -= n
            elif len(b) > 1:
                del b[0]
            else:  # the last units of the shelf
                del shelves[(m, k)]
            sold_units[e] = sold_units.get(e, 0) + n
            sold_cost[e] = sold_cost.get(e, 0) + n * unit_cost[k]
            continue
        front_expired = front[0] <= d
        parts = inv.take(b, n)  # expired units sit in front and leave first
        for e, q in parts:
            sold_units[e] = sold_units.get(e, 0) + q
            sold_cost[e] = sold_cost.get(e, 0) + q * unit_cost[k]
        if front_expired:
            exp_sold[i, j] = inv.split_expired(parts, d)[1]
        if not b:
            del shelves[(m, k)]
    for e, n in sold_units.items():
        s.shelf_book.remove(e, n, sold_cost[e])
    return exp_sold


def machine_table(facts: WorldFacts, day: DayDemand) -> dict[str, np.ndarray]:
    """Per-machine view of the day that the agent may see (shelf before sales, sales, gross profit)."""
    n_skus = np.zeros(facts.n_machines, dtype=np.int64)
    n_skus[day.rows] = np.count_nonzero(day.q, axis=1)
    sold_out = np.zeros(facts.n_machines, dtype=np.int64)
    sold_out[day.rows] = np.count_nonzero((day.q > 0) & (day.sales == day.q), axis=1)
    return {
        "device_id": facts.device_arr,
        "units_before": day.units_before,
        "expired_before": day.expired_before,
        "n_skus": n_skus,
        "free_capacity": facts.capacity - day.units_before,
        "empty": day.units_before == 0,
        "sold_out": sold_out,
        "units_sold": day.per_machine(day.sales),
        "expired_units_sold": day.per_machine(day.expired_sold),
        "revenue": day.per_machine(day.revenue) / 100.0,
        "gross_profit": day.per_machine(day.revenue - day.cogs) / 100.0,
    }
