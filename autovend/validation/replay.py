"""Replay of held-out shelves through the shared demand kernel, vectorised over cells and seeds.

The test window's shelves are taken from the records: for machines with inventory records, each day's
opening shelf (quantities known); for sources without them, the sales rule's offered products (quantities
unknown: full facing, the typical fill, no stock cap). Demand is eq. (2)-(3) at reference prices and
neutral weather; the calendar (weekends, holidays) still applies, as it is known in advance. Each
seed draws the persistent shock for every machine-day and Poisson demand for every product on the
shelf; sales are min(demand, shelf).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.calibration.choice import cell_factors
from autovend.calibration.panel import Panel
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.rng import stream


@dataclass(frozen=True)
class WindowShelves:
    """The cells (machine, product, day) on the shelf in the test window, with their realised sales."""

    m: np.ndarray  # machine code (panel order)
    k: np.ndarray  # product code (panel order)
    d: np.ndarray  # day index within the window (0 = first test day)
    q: np.ndarray  # opening shelf (inf where unknown)
    fill: np.ndarray  # F of the cell's machine-day
    env: np.ndarray  # calendar multiplier of the cell (neutral weather)
    sales: np.ndarray  # realised units
    machines: np.ndarray  # evaluated machine codes
    n_days: int


def window_shelves(
    panel: Panel, settings: DemandSettings, start_day: int, machines: np.ndarray, typical_fill: float
) -> WindowShelves:
    """Cells of the given machines from `start_day` (panel day index) to the panel's end."""
    cells = panel.cells[(panel.cells["d"] >= start_day) & panel.cells["m"].isin(machines)].copy()
    known = cells["known"].to_numpy()
    q = np.where(known, cells["q"].to_numpy(dtype=float), np.inf)
    md = panel.machine_days.set_index(["m", "d"])["fill"]
    fill = md.reindex(pd.MultiIndex.from_arrays([cells["m"], cells["d"]])).to_numpy()
    fill = np.where(np.isnan(fill), typical_fill, fill)
    # calendar multiplier only: neutral weather and reference prices
    neutral = panel.days.assign(t_max_c=np.nan, precip_mm=np.nan)
    env = cell_factors(
        dataclasses.replace(panel, days=neutral),
        settings,
        cells.assign(q=np.nan, price=panel.products["ref_price"].to_numpy()[cells["k"].to_numpy()]),
    )
    return WindowShelves(
        m=cells["m"].to_numpy(),
        k=cells["k"].to_numpy(),
        d=cells["d"].to_numpy() - start_day,
        q=q,
        fill=fill,
        env=env,
        sales=cells["units"].to_numpy(dtype=float),
        machines=np.asarray(machines),
        n_days=panel.n_days - start_day,
    )


def expected_rates(shelves: WindowShelves, model: DemandModel) -> np.ndarray:
    """Expected demand of each cell without shock, from the demand model on each machine-day's shelf.

    The model's machines and products are the panel's. Each machine-day's shelf holds the products
    of its cells (unknown depth: a full facing) at the recorded fill F (at least what they hold).
    """
    rates = np.zeros(len(shelves.m))
    key = shelves.m.astype(np.int64) * (shelves.n_days + 1) + shelves.d
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    phi = model.settings.phi
    for idx in np.split(order, bounds):
        m = int(shelves.m[idx[0]])
        q = shelves.q[idx]
        q_eff = np.where(np.isfinite(q), q, phi)  # unknown depth: full facing
        cap = model.capacity[m]
        fill = min(max(shelves.fill[idx[0]] * cap, q_eff.sum()) / cap, 1.0)  # the recorded F
        rates[idx] = model.expected(
            q_eff[None, :], env=shelves.env[idx][None, :], rows=[m], cols=shelves.k[idx], fill=[fill]
        )[0]
    return rates


@dataclass(frozen=True)
class ReplayResult:
    """Simulated sales per cell summed over seeds, and per-seed aggregates for spreads."""

    mean_sales: np.ndarray  # per cell, mean over seeds
    machine_week: np.ndarray  # (seeds, machines, weeks) simulated units
    subcategory: np.ndarray  # (seeds, subcategories) simulated units
    product_machine: np.ndarray  # (seeds, n_pairs) simulated units per (machine, product) pair
    pairs: np.ndarray  # (n_pairs,) pair code of each cell
    seconds: float = 0.0


def replay(
    shelves: WindowShelves,
    rates: np.ndarray,
    shock_process: ShockProcess,
    *,
    seeds: int,
    seed: int,
    g2: np.ndarray,
    n_g2: int,
    shock: bool = True,
) -> ReplayResult:
    """Draw `seeds` replays of the window (see the module docstring)."""
    t0 = time.perf_counter()
    machines = shelves.machines
    m_pos = pd.Series(np.arange(len(machines)), index=machines).reindex(shelves.m).to_numpy()
    n_weeks = int(np.ceil(shelves.n_days / 7))
    week = shelves.d // 7
    mw_idx = m_pos * n_weeks + week
    pair_key = shelves.m.astype(np.int64) * (int(shelves.k.max()) + 1 if len(shelves.k) else 1) + shelves.k
    _, pairs = np.unique(pair_key, return_inverse=True)
    n_pairs = int(pairs.max()) + 1 if len(pairs) else 0
    out_mw = np.zeros((seeds, len(machines), n_weeks))
    out_g2 = np.zeros((seeds, n_g2))
    out_pairs = np.zeros((seeds, n_pairs))
    total = np.zeros(len(rates))
    g2_cells = g2[shelves.k]
    for s in range(seeds):
        rng = stream(seed, "replay", s)
        xi = shock_process.draw(rng, len(machines), shelves.n_days)[m_pos, shelves.d] if shock else 1.0
        demand = DemandModel.sample_poisson(rng, rates * xi)
        sales = np.minimum(demand, shelves.q)
        total += sales
        out_mw[s] = np.bincount(mw_idx, weights=sales, minlength=len(machines) * n_weeks).reshape(
            len(machines), n_weeks
        )
        out_g2[s] = np.bincount(g2_cells, weights=sales, minlength=n_g2)
        out_pairs[s] = np.bincount(pairs, weights=sales, minlength=n_pairs)
    return ReplayResult(
        mean_sales=total / seeds,
        machine_week=out_mw,
        subcategory=out_g2,
        product_machine=out_pairs,
        pairs=pairs,
        seconds=time.perf_counter() - t0,
    )
