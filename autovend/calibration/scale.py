"""Machine scales kappa_m for machines whose shelves are not known (sales-only machines).

A machine in the structural fit of `no_purchase` has c_m = U_m = kappa_m * u * R_hat_m directly. A
machine without inventory records has only sales: its shelves come from the sales rule of `panel`,
which misses products that did not sell and knows no quantities. Two corrections are learned on the
machines whose shelves are known, by applying the sales-only method to them too:
1. the attraction of sales-rule shelves is rescaled by the geometric-mean ratio of known to
   sales-rule attraction over their machine-days;
2. c_m = mean daily units x (demand/sales ratio) / mean of W/(u R + W) on the rescaled sales-rule
   shelves, and these c_m are rescaled by the median ratio of the structural c_m to the sales-only
   c_m of the known machines.
So kappa_m sets the expected demand of the machine's typical shelf equal to its observed mean daily
units grossed up for lost sales, as the paper defines it, with the method calibrated where the
answer is known. Per-machine stockout rates cannot be seen in sales, so these scales are noisier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.blocks import block_cells_of, lean
from autovend.calibration.cells import Keys, rule_cells_by_block
from autovend.calibration.choice import _environment_table, cell_factors
from autovend.calibration.panel import Panel
from autovend.calibration.store import CellStore
from autovend.demand.settings import DemandSettings


@dataclass(frozen=True)
class SalesOnlyScales:
    """c_m for the sales-only machines and the two learned corrections."""

    c: pd.Series  # by machine code
    attraction_factor: float
    scale_factor: float


def rule_attraction(
    meta: Panel, settings: DemandSettings, cells: pd.DataFrame, b_hat: Any, fill: float, env: np.ndarray | None = None
) -> pd.Series:
    """Attraction of sales-rule shelves by (m, d): full facing, the typical fill (b_hat: `structure.BaseAttraction`)."""
    if cells.empty:
        return pd.Series(dtype=float, index=pd.MultiIndex.from_arrays([[], []]))
    a = cell_factors(meta, settings, cells.assign(q=np.nan), env)
    v = b_hat.of(cells["m"].to_numpy(), cells["k"].to_numpy()) * a
    return fill**settings.eta * pd.Series(v).groupby([cells["m"].to_numpy(), cells["d"].to_numpy()]).sum()


def block_rule_attraction(
    block: Any, meta: Panel, settings: DemandSettings, b_hat: Any, fill: float, sales_only: np.ndarray, env: np.ndarray
) -> tuple[pd.Series, pd.Series]:
    """The block's sales-rule attractions by (m, d): of its machines with inventory records, and of `sales_only`'s.

    The sales rule is applied to the machines with inventory records to calibrate it; `sales_only` is a mask over
    the panel's machines.
    """
    cells = block_cells_of(block)
    has_inv = meta.machines["has_inventory"].to_numpy()
    keys = Keys(meta.n_products, meta.n_days)
    rule = [
        rule_attraction(meta, settings, part, b_hat, fill, env)
        for part in rule_cells_by_block(cells, has_inv, keys, meta.sales_rule_gap_days, meta.products)
    ]
    known = pd.concat(rule) if rule else rule_attraction(meta, settings, cells.iloc[:0], b_hat, fill)
    mine = cells[sales_only[cells["m"].to_numpy()]]
    return known, rule_attraction(meta, settings, mine, b_hat, fill, env)


def _c_from_rule(
    panel: Panel, W: pd.Series, machines: np.ndarray, u: float, R_hat: np.ndarray, demand_ratio: float
) -> pd.Series:
    """c_m = mean units x demand ratio / mean f_m over the machine's days from its first (missing attractions 0).

    f = W / (u R_m + W). The machines of `machines` with attractions and units, in that order. Machines starting on
    the same day are taken together, a row each (a row's mean is numpy's mean of that machine's days alone, so
    the same bits as one machine at a time: no Python per machine).
    """
    mean_units = panel.machine_days.groupby("m")["units"].mean()
    first = panel.machine_days.groupby("m")["d"].min()
    m_w = W.index.get_level_values(0).to_numpy(dtype=np.int64)
    candidates = pd.unique(np.asarray(machines, dtype=np.int64))  # each once, in the order given
    ms = candidates[np.isin(candidates, m_w) & np.isin(candidates, mean_units.index.to_numpy())]
    if not len(ms):
        return pd.Series({}, dtype=float)
    row_of = np.full(max(int(m_w.max()), int(ms.max())) + 1, -1)
    row_of[ms] = np.arange(len(ms))
    n_days = panel.n_days
    start = first.loc[ms].to_numpy(dtype=np.int64)
    dense = np.zeros((len(ms), n_days))
    d_w = W.index.get_level_values(1).to_numpy(dtype=np.int64)
    rows = row_of[m_w]
    keep = rows >= 0
    rows, d_w, values = rows[keep], d_w[keep], W.to_numpy(dtype=float)[keep]
    keep = (d_w >= start[rows]) & (d_w < n_days)
    dense[rows[keep], d_w[keep]] = np.nan_to_num(values[keep], nan=0.0)
    mean_f = np.empty(len(ms))
    for day in np.unique(start):  # machines whose days start on `day`: rows of equal length
        sel = np.flatnonzero(start == day)
        w_days = dense[sel, day:]
        mean_f[sel] = (w_days / (u * R_hat[ms[sel]][:, None] + w_days)).mean(axis=1)
    units = mean_units.loc[ms].to_numpy(dtype=float)
    c = units * demand_ratio / np.maximum(mean_f, 1e-12)
    return pd.Series(c, index=ms.tolist(), dtype=float)


def sales_only_scales(
    store: CellStore,
    panel: Panel,
    settings: DemandSettings,
    b_hat: Any,
    R_hat: np.ndarray,
    u: float,
    fill: float,
    known_W: pd.Series,
    c_known: pd.Series,
    demand_ratio: float,
    sales_only: np.ndarray,
) -> SalesOnlyScales:
    """c_m of the sales-only machines (module docstring); `known_W` by (m, d), `c_known` by m."""
    mask = np.zeros(panel.n_machines, bool)
    mask[sales_only] = True
    env = _environment_table(panel, settings)
    parts = store.map(block_rule_attraction, lean(panel), settings, b_hat, fill, mask, env)
    rule_known = pd.concat([p[0] for p in parts])
    both = pd.concat([known_W.rename("known"), rule_known.rename("rule")], axis=1, join="inner")
    both = both[(both["known"] > 0) & (both["rule"] > 0)]
    attraction_factor = float(np.exp(np.mean(np.log(both["known"] / both["rule"])))) if len(both) else 1.0
    scale_factor = 1.0
    if len(c_known):
        c_rule_known = _c_from_rule(
            panel, rule_known * attraction_factor, c_known.index.to_numpy(), u, R_hat, demand_ratio
        )
        common = c_rule_known.index.intersection(c_known.index)
        if len(common):
            scale_factor = float(np.median(c_known[common] / c_rule_known[common]))
    W_so = pd.concat([p[1] for p in parts]) * attraction_factor
    c = _c_from_rule(panel, W_so, sales_only, u, R_hat, demand_ratio) * scale_factor
    return SalesOnlyScales(c=c, attraction_factor=attraction_factor, scale_factor=scale_factor)
