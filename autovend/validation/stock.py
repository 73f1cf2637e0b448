"""The test window of machines with inventory records, replayed from the operator's decisions only.

What the operator decided in the window is on record: the visits, and the count (or fill) of each product at
each visit. What sold is not a decision, and a forecast may not see it. So the window is simulated the way the
simulator runs a day (the one demand kernel, `autovend.demand.kernel`): each machine starts from its shelf on the
window's first morning, known from training records only (its last count before the window, less the units sold
since, in training); on a visit day the shelf is set to the visit's counts (a product counted at 0, or absent
from the machine's full count, is off the shelf); every other day the model's own simulated sales deplete it,
and the shelf's facings and fill in eq. (2) follow. The realised sales of the window are never read.

The paper reconstructed the window's shelves from the counts less the window's own realised sales; that replay
is kept as the `paper_protocol` variant (`shelves.recorded_shelves`), reported beside the forecast and never in a
verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.calibration.cells import day_index
from autovend.calibration.panel import Panel
from autovend.demand import kernel
from autovend.demand.model import DemandModel
from autovend.demand.settings import DemandSettings
from autovend.validation.grid import EvalGrid
from autovend.validation.shelves import WindowShelves, _env


@dataclass(frozen=True)
class StockPlan:
    """Inventory machines' window: products, opening shelf and the visits' counts, machine x slot arrays."""

    machines: np.ndarray  # (M,) machine codes (full panel), sorted
    products: np.ndarray  # (M, S) product code of each slot, -1 for an empty slot
    q0: np.ndarray  # (M, S) units on the shelf on the window's first morning (training records only)
    visits: dict[int, tuple[np.ndarray, np.ndarray]]  # window day -> (machine positions, their counts (n, S))
    env: np.ndarray  # (days, M, S) calendar multiplier of each slot (neutral weather, reference prices)
    n_days: int

    def shelves(self) -> WindowShelves:
        """The decided shelf of every window day: the products with units at the last visit (or the opening shelf).

        What the operator put on the shelf, not what was left of it: the forecast shelf that references and the
        grid read (the replay depletes it).
        """
        placed = self.q0.copy()
        ms, ks, ds, qs = [], [], [], []
        for day in range(self.n_days):
            if day in self.visits:
                pos, counts = self.visits[day]
                placed[pos] = counts
            on_i, on_j = np.nonzero((placed > 0) & (self.products >= 0))
            ms.append(self.machines[on_i])
            ks.append(self.products[on_i, on_j])
            ds.append(np.full(len(on_i), day))
            qs.append(placed[on_i, on_j].astype(float))
        m, k, d, q = (np.concatenate(x) if x else np.zeros(0, np.int64) for x in (ms, ks, ds, qs))
        order = np.lexsort((k, d, m))
        m, k, d, q = m[order].astype(np.int64), k[order].astype(np.int64), d[order].astype(np.int64), q[order]
        mi = np.searchsorted(self.machines, m)
        si = np.argmax(self.products[mi] == k[:, None], axis=1) if len(m) else np.zeros(0, np.int64)
        env = self.env[d, mi, si] if len(m) else np.zeros(0)
        return WindowShelves(m, k, d, q, q, np.ones(len(m)), env, self.n_days)


def _last_visits(inventory: pd.DataFrame, panel: Panel, start_ts: pd.Timestamp) -> pd.DataFrame:
    """Each machine-day's last visit: (m, d, k, qty) rows of its count, kept products only (k = -1 for the rest)."""
    m_of = pd.Series(np.arange(panel.n_machines), index=panel.machines["machine_id"])
    k_of = pd.Series(np.arange(panel.n_products), index=panel.products["sku_id"])
    inv = pd.DataFrame(
        {
            "m": m_of.reindex(inventory["machine_id"]).fillna(-1).to_numpy(np.int64),
            "k": k_of.reindex(inventory["sku_id"]).fillna(-1).to_numpy(np.int64),
            "ts": inventory["ts"].to_numpy(),
            "qty": inventory["shelf_qty"].to_numpy(dtype=float),
        }
    )
    inv = inv[inv["m"] >= 0]
    inv["d"] = day_index(inv["ts"], start_ts)
    last = inv.groupby(["m", "d"])["ts"].transform("max")
    inv = inv[inv["ts"].to_numpy() == last.to_numpy()]
    return inv.drop_duplicates(["m", "d", "k"], keep="last")[["m", "d", "k", "qty"]]


def stock_plan(
    full: Panel, inventory: pd.DataFrame, settings: DemandSettings, start_day: int, machines: np.ndarray
) -> StockPlan:
    """The plan of `machines` (inventory machines of `full`) for the window from `start_day` (module docstring)."""
    machines = np.sort(np.asarray(machines, dtype=np.int64))
    n_days = full.n_days - start_day
    start_ts = pd.Timestamp(full.days["date"].iat[0])
    visits = _last_visits(inventory, full, start_ts)
    visits = visits[visits["m"].isin(machines)]
    before = visits[visits["d"] <= start_day]
    last_day = before.groupby("m")["d"].max()
    opening = before[before["d"].to_numpy() == last_day.reindex(before["m"]).to_numpy()]
    opening = opening[opening["k"] >= 0]
    # units sold in training since each machine's last count (the count's own day included)
    c = full.cells
    cm, cd = c["m"].to_numpy(), c["d"].to_numpy()
    since = last_day.reindex(cm).to_numpy()
    sold = (cd < start_day) & ~np.isnan(since) & (cd >= np.nan_to_num(since, nan=start_day))
    sold &= c["units"].to_numpy() > 0
    sold_pairs = pd.DataFrame({"m": cm[sold], "k": c["k"].to_numpy()[sold], "units": c["units"].to_numpy()[sold]})
    sold_pairs = sold_pairs.groupby(["m", "k"])["units"].sum()
    in_window = visits[(visits["d"] >= start_day) & (visits["k"] >= 0)]
    pairs = pd.concat([opening[["m", "k"]], in_window[["m", "k"]]]).drop_duplicates().sort_values(["m", "k"])
    width = int(pairs.groupby("m").size().max()) if len(pairs) else 1
    M = len(machines)
    products = np.full((M, width), -1, dtype=np.int64)
    slot: dict[tuple[int, int], tuple[int, int]] = {}
    for m, group in pairs.groupby("m"):
        i = int(np.searchsorted(machines, m))
        ks = group["k"].to_numpy()
        products[i, : len(ks)] = ks
        slot.update({(int(m), int(k)): (i, j) for j, k in enumerate(ks)})
    q0 = np.zeros((M, width))
    for m, k, qty in opening[["m", "k", "qty"]].itertuples(index=False):
        i, j = slot[(int(m), int(k))]
        q0[i, j] = max(float(qty) - float(sold_pairs.get((m, k), 0.0)), 0.0)
    plan_visits: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    window = visits[visits["d"] >= start_day]
    for d, day in window.groupby("d"):
        pos = np.searchsorted(machines, day["m"].unique())
        counts = np.zeros((len(pos), width))  # a full count: every product not counted is off the shelf
        row = {int(machines[p]): r for r, p in enumerate(pos)}
        for m, k, qty in day[day["k"] >= 0][["m", "k", "qty"]].itertuples(index=False):
            counts[row[int(m)], slot[(int(m), int(k))][1]] = float(qty)
        plan_visits[int(d) - start_day] = (pos, counts)
    mi, si = np.nonzero(products >= 0)
    env = np.ones((n_days, M, width))
    for d in range(n_days):
        env[d, mi, si] = _env(full, settings, machines[mi], products[mi, si], np.full(len(mi), start_day + d))
    return StockPlan(machines, products, q0, plan_visits, env, n_days)


@dataclass(frozen=True)
class StockModel:
    """What the replay of a plan draws from: the demand model's b and U on the plan's slots, and its changes.

    `factor` (M,) multiplies each machine's demand (the level rule, a flat scale); `split_b` replaces b in the
    split over products only, each machine-day's total kept at the model's (the popularity controls).
    """

    b: np.ndarray  # (M, S)
    U: np.ndarray  # (M,)
    capacity: np.ndarray  # (M,)
    eta: float
    phi: float
    factor: np.ndarray
    split_b: np.ndarray | None = None

    @classmethod
    def of(cls, model: DemandModel, plan: StockPlan) -> StockModel:
        """The model's parameters on the plan's machines and slots."""
        b = np.where(plan.products >= 0, model.b[plan.machines[:, None], np.maximum(plan.products, 0)], 0.0)
        return cls(
            b=b,
            U=model.U[plan.machines],
            capacity=model.capacity[plan.machines],
            eta=model.settings.eta,
            phi=model.settings.phi,
            factor=np.ones(len(plan.machines)),
        )


def simulate_stock(
    rng: np.random.Generator, grid: EvalGrid, plan: StockPlan, sm: StockModel, xi: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One simulation of the plan's window: its sales by flat machine-week of `grid`, by pair, by pair and week.

    The last is (P, W), its rows adding up to the second.
    `xi` (M, days): each machine-day's shock (None: 1). Demand is drawn from `rng` day by day.
    """
    M, S = plan.products.shape
    n_mw = grid.n_machines * grid.n_weeks
    mi, si = np.nonzero(plan.products >= 0)
    m_pos = grid.m_pos(plan.machines)
    q = plan.q0.copy()
    sold_pair = np.zeros((M, S))
    sold_week = np.zeros((grid.n_weeks, M, S))
    out_mw = np.zeros(n_mw)
    for d in range(plan.n_days):
        if d in plan.visits:
            pos, counts = plan.visits[d]
            q[pos] = counts
        w = kernel.attraction(sm.b, q, sm.capacity, eta=sm.eta, phi=sm.phi, env=plan.env[d])
        rates = kernel.product_rates(w, sm.U, 1.0 if xi is None else xi[:, d])
        if sm.split_b is not None:  # the model's machine-day total, split by another popularity
            w_alt = kernel.attraction(sm.split_b, q, sm.capacity, eta=sm.eta, phi=sm.phi, env=plan.env[d])
            tot, tot_alt = rates.sum(axis=1), w_alt.sum(axis=1)
            rates = w_alt * np.divide(tot, tot_alt, out=np.zeros(M), where=tot_alt > 0)[:, None]
        sales = np.minimum(DemandModel.sample_poisson(rng, rates * sm.factor[:, None]), q)
        q = q - sales
        sold_pair += sales
        sold_week[d // 7] += sales
        out_mw += np.bincount(m_pos * grid.n_weeks + d // 7, weights=sales.sum(axis=1), minlength=n_mw)
    keys = grid.keys(plan.machines[mi], plan.products[mi, si])
    on = np.isin(keys, grid.pair_key)  # a slot only ever counted at 0 never sells and has no pair on the grid
    pos = np.searchsorted(grid.pair_key, keys[on])
    pairs = np.bincount(pos, weights=sold_pair[mi[on], si[on]], minlength=len(grid.pair_key))
    by_week = [np.bincount(pos, weights=w[mi[on], si[on]], minlength=len(grid.pair_key)) for w in sold_week]
    return out_mw, pairs, np.stack(by_week, axis=1) if by_week else np.zeros((len(grid.pair_key), 0))
