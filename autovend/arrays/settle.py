"""The close of a day on N array runs (`end_day`) and the start of the next (`start_day`).

The close is the simulator's (`autovend.sim.sales`, `autovend.sim.settlement`) draw for draw: expected
demand of every stocked slot from the world's demand model on the shelves and prices in force, Poisson demand
from the run's uniforms of the day (stream ("demand", day), the common random numbers, drawn at the stocked cells
only by `autovend.arrays.uniforms`) by the fast, exact quantiles of `autovend.arrays.kernel` (where a draw is close
to a step of the CDF, with the rate to the bit: each machine's total attraction summed as numpy sums the
simulator's stocked block, `block_row_sums`), sales taking the earliest-expiring units, the fine on expired units
sold, one visit fee per touched machine. The start of a day lands the orders due, charges the warehouse rent on
every unit held and the machines' fixed fee.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.arrays.facts import ArrayFacts
from autovend.arrays.kernel import block_row_sums, nonzero, poisson_quantiles
from autovend.arrays.moves import add_warehouse
from autovend.arrays.sell_kernel import sell
from autovend.arrays.state import ArrayState
from autovend.arrays.uniforms import cell_uniforms
from autovend.demand.kernel import demand_from_uniforms
from autovend.distinct import distinct

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class DayClose:
    """What the close of a day gave each run (fen and units)."""

    units_sold: IntArray  # (N,)
    expired_sold: IntArray  # (N,)
    revenue: IntArray  # (N,)
    visits: IntArray  # (N,) machines touched
    net: IntArray  # (N,) change of net assets since the previous close


def _uniforms(st: ArrayState, facts: ArrayFacts, n: IntArray, flat: IntArray) -> FloatArray:
    """The day's uniforms of cells (run n, machine-product index m * K + k): the simulator's (M, K) draw's."""
    return cell_uniforms(st.seeds, ("demand", st.day), n, flat)


def _attraction(
    facts: ArrayFacts, st: ArrayState, n: IntArray, m: IntArray, k: IntArray, units: IntArray
) -> FloatArray:
    """Eq. (2) of the stocked cells, value for value as `DemandModel.attraction` on the simulator's block."""
    N, M, K = st.n_runs, facts.n_machines, facts.n_products
    fill = np.minimum(st.shelf_n.astype(np.float64).ravel() / np.tile(facts.cap_f, N), 1.0) ** facts.eta
    w = facts.b[m * K + k] * fill[n * M + m] * np.minimum(1.0, units.astype(np.float64) / facts.phi)
    ratio = _price(st, n * M + m, k, K) / facts.ref_fen[k]
    factor = np.ones(len(n))
    moved = (ratio != 1.0) & (ratio > 0)
    np.power(ratio, -facts.elasticity[m], out=factor, where=moved)
    w = w * factor
    return w * facts.env[st.day][facts.site_of[m], facts.category_of[k]]


def _price(st: ArrayState, row: IntArray, k: IntArray, K: int) -> IntArray:
    """`st.price[n, m, k]` of cells (row = n * M + m) by one flat gather, as int64."""
    return st.price.reshape(-1)[row * K + k].astype(np.int64)


def _rates(facts: ArrayFacts, st: ArrayState, row: IntArray, w: FloatArray, W: FloatArray) -> FloatArray:
    """Eq. (3): each cell's share of its machine's purchases, given the machines' total attractions W (N * M,)."""
    U = np.tile(facts.U, st.n_runs)
    denom = U + W
    scale = st.xi[:, :, st.day - 1].ravel() * np.divide(U, denom, out=np.zeros(len(U)), where=denom > 0)
    return w * scale[row]


def _block_totals(
    facts: ArrayFacts, st: ArrayState, n: IntArray, m: IntArray, k: IntArray, w: FloatArray, rows: IntArray
) -> FloatArray:
    """(N * M,) the total attractions of machines `rows` (n * M + m), summed as numpy sums the stocked block.

    n, m, k, w: every stocked cell of the runs of those machines; entries of other machines are 0.
    """
    N, M, K = st.n_runs, facts.n_machines, facts.n_products
    occ = np.zeros((N, K), dtype=bool)
    occ[n, k] = True
    pos = np.cumsum(occ, axis=1) - 1  # a product's column in its run's block (the products on some shelf)
    row = n * M + m
    sel = np.isin(row, rows)
    return block_row_sums(row[sel], pos[n[sel], k[sel]], w[sel], np.repeat(occ.sum(axis=1), M), N * M)


def expected_demand(
    facts: ArrayFacts, st: ArrayState, n: IntArray, m: IntArray, k: IntArray, units: IntArray
) -> FloatArray:
    """Expected demand of stocked cells (run n, machine m, product k, `units` > 0): the simulator's, to the bit."""
    w = _attraction(facts, st, n, m, k, units)
    row = n * facts.n_machines + m
    return _rates(facts, st, row, w, _block_totals(facts, st, n, m, k, w, distinct(row)))


def day_demand(
    facts: ArrayFacts, st: ArrayState, n: IntArray, m: IntArray, k: IntArray, units: IntArray, u: FloatArray
) -> IntArray:
    """The day's demand of the stocked cells from their uniforms: the simulator's draws.

    The machines' totals are first summed in cell order; where a draw is not sure under that sum (its uniform
    within `FAST_MARGIN` of a CDF step), the totals of its runs are summed exactly as the simulator's and the
    draw is taken by the simulator's routine.
    """
    M = facts.n_machines
    row = n * M + m
    w = _attraction(facts, st, n, m, k, units)
    W: FloatArray = np.bincount(row, weights=w, minlength=st.n_runs * M).astype(np.float64)
    demand, unsure = poisson_quantiles(u, _rates(facts, st, row, w, W))
    if unsure.any():
        runs = np.isin(n, distinct(n[unsure]))
        rows = distinct(row[unsure])
        W[rows] = _block_totals(facts, st, n[runs], m[runs], k[runs], w[runs], rows)[rows]
        rates = _rates(facts, st, row[unsure], w[unsure], W)
        demand[unsure] = demand_from_uniforms(u[unsure], rates)
    return demand


def end_day(facts: ArrayFacts, st: ArrayState, touched: BoolArray) -> DayClose:
    """Realise the day's demand, sell, charge fines and visits, and book the close (see the module docstring)."""
    N, K = st.n_runs, facts.n_products
    d = st.day
    n, m, s = nonzero(st.slot_q > 0)
    k = st.slot_k[n, m, s].astype(np.int64)
    units = st.slot_q[n, m, s]
    demand = day_demand(facts, st, n, m, k, units, _uniforms(st, facts, n, m * K + k))
    sales = np.minimum(demand, units)
    selling = sales > 0
    st.sold[...] = 0
    st.revenue[...] = 0
    st.cogs[...] = 0
    per_run = np.zeros((3, N), dtype=np.int64)
    sell(n[selling], m[selling], s[selling], k[selling], sales[selling].astype(np.int64), d,  # compiled
         st.shelf.expiry, st.shelf.qty, st.shelf.used, st.slot_q, st.shelf_n, st.price, facts.cost_fen, st.book,
         st.sold, st.revenue, st.cogs, per_run)  # fmt: skip
    visits = touched.sum(axis=1).astype(np.int64)
    st.cash += per_run[2] - per_run[1] * facts.fine_fen - visits * facts.visit_fen
    close = st.net_assets(facts.cost_fen)
    net = close - st.close
    st.close = close
    st.close_cash = st.cash.copy()
    return DayClose(per_run[0], per_run[1], per_run[2], visits, net)


def start_day(facts: ArrayFacts, st: ArrayState, d: int) -> None:
    """Day d begins: the orders due land (expiring d + shelf life), rent on the warehouse's units, the fixed fee."""
    st.day = d
    R = st.arriving.shape[0]
    due = st.arriving[d % R]
    n, k = nonzero(due)
    if len(n):
        q = due[n, k]
        expiry = (d + facts.life[k]).astype(np.int32)[:, None]
        add_warehouse(facts, st, n, k, expiry, q.astype(np.int32)[:, None])
        np.add.at(st.book, (n, d + facts.life[k]), q * facts.cost_fen[k])
        st.transit[n, k] -= q
        due[n, k] = 0
    st.cash -= st.wh_q.sum(axis=1) * facts.rent_fen + facts.daily_fee_fen
