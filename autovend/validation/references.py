"""The paper's two references, as point forecasts on the grid (machine-weeks and machine x product pairs).

- persistence: each machine's mean weekly sales over the `weeks` weeks before the window (the paper's);
  on pairs, each pair's units over those weeks, spread over the window at the same daily rate (so the
  pairs of a machine add up to its machine-weeks);
- naive: each machine's mean daily units over its training days (the paper: its earlier level), spread
  uniformly over the products on its forecast shelf each day.

Both read only records before the window and the forecast shelves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.calibration.panel import Panel
from autovend.validation.grid import EvalGrid, Forecast
from autovend.validation.shelves import WindowShelves


def persistence_pairs(full: Panel, train_days: int, machines: np.ndarray, weeks: int) -> pd.DataFrame:
    """(m, k, units) of the evaluated machines' sales in the `weeks` weeks before the window."""
    c = full.cells
    d = c["d"].to_numpy()
    sel = (d >= train_days - 7 * weeks) & (d < train_days) & c["m"].isin(machines).to_numpy()
    sel &= c["units"].to_numpy() > 0
    out = pd.DataFrame({"m": c["m"].to_numpy()[sel], "k": c["k"].to_numpy()[sel], "units": c["units"].to_numpy()[sel]})
    return out.groupby(["m", "k"], as_index=False)["units"].sum()


def persistence(grid: EvalGrid, full: Panel, train_days: int, pairs: pd.DataFrame, weeks: int) -> Forecast:
    """The persistence reference on the grid."""
    md = full.machine_days
    look = md[(md["d"] >= train_days - 7 * weeks) & (md["d"] < train_days)]
    daily = look.groupby("m")["units"].sum().reindex(grid.machines).fillna(0.0).to_numpy() / (7 * weeks)
    mw = daily[:, None] * grid.days_in_week[None, :]
    pair_daily = grid.by_pair(pairs["m"].to_numpy(), pairs["k"].to_numpy(), pairs["units"].to_numpy(dtype=float))
    pair_week = (pair_daily / (7 * weeks))[:, None] * grid.days_in_week[None, :]
    return Forecast("persistence", mw, pair_daily / (7 * weeks) * grid.n_days, pair_week=pair_week)


def naive(grid: EvalGrid, full: Panel, train_days: int, shelves: WindowShelves) -> Forecast:
    """The naive reference on the grid."""
    md = full.machine_days
    daily = md[md["d"] < train_days].groupby("m")["units"].mean().reindex(grid.machines).fillna(0.0).to_numpy()
    mw = daily[:, None] * grid.days_in_week[None, :]
    key = shelves.m.astype(np.int64) * (shelves.n_days + 1) + shelves.d
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    per_cell = daily[grid.m_pos(shelves.m)] / counts[inverse]
    pair_week = grid.by_pair_week(shelves.m, shelves.k, shelves.d, per_cell)
    return Forecast("naive", mw, grid.by_pair(shelves.m, shelves.k, per_cell), pair_week=pair_week)
