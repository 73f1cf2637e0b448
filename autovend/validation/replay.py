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
) -> tuple[Forecast, float]:
    """Draw `settings.seeds` replays of the window; the forecast on the grid and the seconds it took."""
    t0 = time.perf_counter()
    M = grid.n_machines
    m_pos = grid.m_pos(shelves.m)
    mw_idx = grid.mw_index(shelves.m, shelves.d)
    pair_idx = grid.pair_index(shelves.m, shelves.k)
    n_mw, n_pairs = M * grid.n_weeks, len(grid.pair_key)
    out_mw = np.zeros((settings.seeds, M, grid.n_weeks))
    out_pairs = np.zeros((settings.seeds, n_pairs))
    for s in range(settings.seeds):
        rng = stream(settings.seed, "replay", s)
        xi = shock_process.draw(rng, M, shelves.n_days)[m_pos, shelves.d] if shock else 1.0
        sales = np.minimum(DemandModel.sample_poisson(rng, rates * xi), shelves.q)
        out_mw[s] = np.bincount(mw_idx, weights=sales, minlength=n_mw).reshape(M, grid.n_weeks)
        out_pairs[s] = np.bincount(pair_idx, weights=sales, minlength=n_pairs)
    forecast = Forecast(name, out_mw.mean(axis=0), out_pairs.mean(axis=0), out_mw, out_pairs)
    return forecast, time.perf_counter() - t0
