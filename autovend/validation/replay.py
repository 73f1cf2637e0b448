"""Replay of the window's shelves through the shared demand kernel, vectorised over cells and seeds.

Demand is eq. (2)-(3) at reference prices and neutral weather; the calendar (weekends, holidays) still
applies, as it is known in advance. Each seed draws the persistent shock for every machine-day and Poisson
demand for every product on the shelf; sales are min(demand, shelf). Seed s of every replay draws from the
same stream ("replay", s), so the model, its controls and its variants share their random numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from autovend.demand.model import DemandModel, ShockProcess
from autovend.rng import stream
from autovend.validation.grid import EvalGrid, Forecast
from autovend.validation.shelves import WindowShelves
from autovend.validation.stock import StockModel, StockPlan, simulate_stock


@dataclass(frozen=True)
class ReplaySettings:
    """Seeds of a replay: how many, and the base seed of their streams."""

    seeds: int
    seed: int


def replay(
    name: str,
    grid: EvalGrid,
    shelves: WindowShelves,
    rates: np.ndarray,
    shock_process: ShockProcess,
    settings: ReplaySettings,
    *,
    shock: bool = True,
    stock: tuple[StockPlan, StockModel] | None = None,
) -> tuple[Forecast, float]:
    """Draw `settings.seeds` replays of the window; the forecast on the grid and the seconds it took.

    `shelves` and `rates`: cells whose rates are fixed for the window (pre-window shelves; stock unknown, or
    capped by `shelves.q`). `stock`: machines simulated from their opening shelf and visits (`stock`), each
    day's shelf depleted by the simulated sales. Both draw from seed s's stream ("replay", s): the shock of
    every grid machine-day first, then the fixed cells' demand, then the simulated machines' day by day.
    """
    t0 = time.perf_counter()
    M = grid.n_machines
    m_pos = grid.m_pos(shelves.m)
    mw_idx = grid.mw_index(shelves.m, shelves.d)
    pair_idx = grid.pair_index(shelves.m, shelves.k)
    n_mw, n_pairs = M * grid.n_weeks, len(grid.pair_key)
    pw_idx = pair_idx * grid.n_weeks + shelves.d // 7
    out_mw = np.zeros((settings.seeds, M, grid.n_weeks))
    out_pairs = np.zeros((settings.seeds, n_pairs))
    sum_pw = np.zeros((n_pairs, grid.n_weeks))  # the seeds' pairs by week, summed (only their mean is kept)
    stock_pos = None if stock is None else grid.m_pos(stock[0].machines)
    for s in range(settings.seeds):
        rng = stream(settings.seed, "replay", s)
        xi_all = shock_process.draw(rng, M, grid.n_days) if shock else None
        xi = 1.0 if xi_all is None else xi_all[m_pos, shelves.d]
        sales = np.minimum(DemandModel.sample_poisson(rng, rates * xi), shelves.q)
        mw = np.bincount(mw_idx, weights=sales, minlength=n_mw)
        pairs = np.bincount(pair_idx, weights=sales, minlength=n_pairs)
        sum_pw += np.bincount(pw_idx, weights=sales, minlength=n_pairs * grid.n_weeks).reshape(n_pairs, -1)
        if stock is not None:
            xi_stock = None if xi_all is None else xi_all[stock_pos]
            s_mw, s_pairs, s_pw = simulate_stock(rng, grid, stock[0], stock[1], xi_stock)
            mw, pairs = mw + s_mw, pairs + s_pairs
            sum_pw += s_pw
        out_mw[s] = mw.reshape(M, grid.n_weeks)
        out_pairs[s] = pairs
    pair_week = sum_pw / settings.seeds
    forecast = Forecast(name, out_mw.mean(axis=0), out_pairs.mean(axis=0), out_mw, out_pairs, pair_week)
    return forecast, time.perf_counter() - t0
