"""The test window's shelves a forecast may use, and the window's realised sales it is scored on.

A forecast of the test window may use the source's inventory records (the operator's decisions) and
anything dated before the window; never the window's sales. Three kinds of shelves:

- inventory (the paper's protocol): for machines with inventory records, each window day's opening
  shelf reconstructed from the counts (`autovend.calibration.panel`): the shelf the operator stocked.
- pre-window (sales-only machines): each window day's shelf is the machine's assortment at the window's
  start, i.e. the products the sales rule puts on its shelf in the last `shelf_weeks` training weeks,
  built from a panel of the training records only. Each product's facing is the share of those weeks'
  days it was on the sales rule's shelf (its presence), at the training calibration's typical fill, and
  its stock is unknown (sales are not capped). So the window's shelf is the average shelf the calibration
  saw at the end of training: the model's scales of sales-only machines are fitted on sales-rule shelves,
  and a shelf of every product at a full facing would be a different, larger shelf than the one they
  were measured on. The same shelf every day: the forecast cannot know later changes.
- sales rule (an upper bound, never a forecast): the sales rule applied to the window's own sales, as the
  paper's pipeline did for sales-only sources. It knows which products sold in the window, so it is
  reported beside the forecast and never enters a verdict.

Machine and product codes are the full panel's (the training panel's machines are mapped by id; the
product codes are the same in both panels: they come from the products table, not from the sales).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.calibration.choice import cell_factors
from autovend.calibration.panel import Panel
from autovend.demand.model import DemandModel
from autovend.demand.settings import DemandSettings


@dataclass(frozen=True)
class WindowShelves:
    """The cells (machine, product, day) on the shelf in the test window."""

    m: np.ndarray  # machine code (full panel order)
    k: np.ndarray  # product code (panel order)
    d: np.ndarray  # day index within the window (0 = first test day)
    q: np.ndarray  # opening shelf (inf where unknown): caps the sales
    depth: np.ndarray  # units that set the facing min(1, depth / phi): q where known, else phi x presence
    fill: np.ndarray  # F of the cell's machine-day
    env: np.ndarray  # calendar multiplier of the cell (neutral weather)
    n_days: int

    def subset(self, keep: np.ndarray) -> WindowShelves:
        """The cells where `keep` is true."""
        return WindowShelves(
            self.m[keep],
            self.k[keep],
            self.d[keep],
            self.q[keep],
            self.depth[keep],
            self.fill[keep],
            self.env[keep],
            self.n_days,
        )

    @staticmethod
    def concat(parts: list[WindowShelves]) -> WindowShelves:
        """The cells of several shelf sets (of disjoint machines), in (m, d, k) order; one set as it is."""
        if not parts:
            raise ValueError("no shelves to join")
        if len(parts) == 1:
            return parts[0]
        cols = {f: np.concatenate([getattr(p, f) for p in parts]) for f in ("m", "k", "d", "q", "depth", "fill", "env")}
        order = np.lexsort((cols["k"], cols["d"], cols["m"]))
        return WindowShelves(**{f: v[order] for f, v in cols.items()}, n_days=parts[0].n_days)


@dataclass(frozen=True)
class WindowSales:
    """The realised units of the evaluated machines' kept products in the test window (units > 0 only)."""

    m: np.ndarray
    k: np.ndarray
    d: np.ndarray
    units: np.ndarray


def _env(panel: Panel, settings: DemandSettings, m: np.ndarray, k: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The calendar multiplier of cells (neutral weather, reference prices); d indexes the panel's days."""
    neutral = panel.days.assign(t_max_c=np.nan, precip_mm=np.nan)
    cells = pd.DataFrame({"m": m, "k": k, "d": d, "q": np.nan})
    cells["price"] = panel.products["ref_price"].to_numpy()[k]
    return cell_factors(dataclasses.replace(panel, days=neutral), settings, cells)


def recorded_shelves(
    panel: Panel, settings: DemandSettings, start_day: int, machines: np.ndarray, typical_fill: float
) -> WindowShelves:
    """The panel's own cells of `machines` from `start_day` to its end: inventory shelves, or the sales rule's.

    For machines with inventory records these are the reconstructed shelves (quantities known after the
    first count); for sales-only machines the sales rule's, which are built from the window's own sales.
    """
    cells = panel.cells[(panel.cells["d"] >= start_day) & panel.cells["m"].isin(machines)]
    m, k, d = (cells[c].to_numpy() for c in ("m", "k", "d"))
    known = cells["known"].to_numpy()
    q = np.where(known, cells["q"].to_numpy(dtype=float), np.inf)
    md = panel.machine_days.set_index(["m", "d"])["fill"]
    fill = md.reindex(pd.MultiIndex.from_arrays([m, d])).to_numpy()
    fill = np.where(np.isnan(fill), typical_fill, fill)
    depth = np.where(known, q, settings.phi)  # unknown depth: a full facing
    env = _env(panel, settings, m, k, d)
    return WindowShelves(m, k, d - start_day, q, depth, fill, env, panel.n_days - start_day)


def pre_window_assortment(train: Panel, full: Panel, shelf_weeks: int) -> pd.DataFrame:
    """(m, k, presence) of the products on each machine's sales-rule shelf in the last `shelf_weeks` weeks.

    presence: the share of the machine's days in those weeks (from its first record) with the product on
    the shelf. `train` is a panel of the records before the window only, so a sale in the window cannot
    enter it; m is the machine's code in `full`.
    """
    first = train.n_days - 7 * shelf_weeks
    cells = train.cells[train.cells["d"] >= first]
    md = train.machine_days
    days = md[md["d"] >= first].groupby("m").size()
    pairs = cells.groupby(["m", "k"], as_index=False).size()
    pairs["presence"] = pairs["size"].to_numpy() / days.reindex(pairs["m"]).to_numpy()
    to_full = pd.Series(np.arange(full.n_machines), index=full.machines["machine_id"])
    m_full = to_full.reindex(train.machines["machine_id"].to_numpy()[pairs["m"].to_numpy()]).to_numpy()
    if np.isnan(m_full).any():  # every machine that sold before the window sold in the records
        raise ValueError("a machine of the training panel is missing from the full panel")
    out = pd.DataFrame(
        {
            "m": m_full.astype(np.int64),
            "k": pairs["k"].to_numpy(dtype=np.int64),
            "presence": np.minimum(pairs["presence"].to_numpy(dtype=float), 1.0),
        }
    )
    return out.sort_values(["m", "k"], kind="stable").reset_index(drop=True)


def pre_window_shelves(
    full: Panel,
    assortment: pd.DataFrame,
    settings: DemandSettings,
    start_day: int,
    machines: np.ndarray,
    typical_fill: float,
) -> WindowShelves:
    """Every window day of `machines`: their pre-window assortment at its presence, fill `typical_fill`.

    Only the full panel's calendar (its days) and machines table are read from `full`, never its cells.
    """
    a = assortment[assortment["m"].isin(machines)]
    n_days = full.n_days - start_day
    per_day = len(a)
    m = np.tile(a["m"].to_numpy(), n_days)
    k = np.tile(a["k"].to_numpy(), n_days)
    depth = np.tile(a["presence"].to_numpy(dtype=float), n_days) * settings.phi
    d = np.repeat(np.arange(n_days), per_day)
    order = np.lexsort((k, d, m))
    m, k, d, depth = m[order], k[order], d[order], depth[order]
    q = np.full(len(m), np.inf)
    fill = np.full(len(m), typical_fill)
    return WindowShelves(m, k, d, q, depth, fill, _env(full, settings, m, k, d + start_day), n_days)


def window_sales(full: Panel, start_day: int, machines: np.ndarray) -> WindowSales:
    """The realised units of `machines` in the window (the full panel's cells with units > 0)."""
    c = full.cells
    sel = (c["d"].to_numpy() >= start_day) & c["m"].isin(machines).to_numpy() & (c["units"].to_numpy() > 0)
    return WindowSales(
        m=c["m"].to_numpy()[sel].astype(np.int64),
        k=c["k"].to_numpy()[sel].astype(np.int64),
        d=c["d"].to_numpy()[sel].astype(np.int64) - start_day,
        units=c["units"].to_numpy(dtype=float)[sel],
    )


def expected_rates(shelves: WindowShelves, model: DemandModel) -> np.ndarray:
    """Expected demand of each cell without shock, from the demand model on each machine-day's shelf.

    The model's machines and products are the panel's. Each machine-day's shelf holds the products
    of its cells at their depth (`WindowShelves.depth`) and the recorded fill F (at least what they hold).
    """
    rates = np.zeros(len(shelves.m))
    key = shelves.m.astype(np.int64) * (shelves.n_days + 1) + shelves.d
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for idx in np.split(order, bounds) if len(order) else []:
        m = int(shelves.m[idx[0]])
        q_eff = shelves.depth[idx]
        cap = model.capacity[m]
        fill = min(max(shelves.fill[idx[0]] * cap, q_eff.sum()) / cap, 1.0)  # the recorded F
        rates[idx] = model.expected(
            q_eff[None, :], env=shelves.env[idx][None, :], rows=[m], cols=shelves.k[idx], fill=[fill]
        )[0]
    return rates


def training_level_anchor(
    train: Panel, full: Panel, model: DemandModel, machines: np.ndarray, assortment: pd.DataFrame, typical_fill: float
) -> np.ndarray:
    """Per machine (codes `machines`): the model's training level over its level on the pre-window shelf.

    The model's mean expected daily units on the machine's training shelves over its expected daily units
    on its pre-window shelf, both at neutral weather and without the calendar.

    A sales-only machine's scale is fitted on the sales rule's shelves, whose size moves with its sales (a
    slow week puts fewer products on the shelf), so the pre-window shelf, measured in the last weeks only,
    would carry those weeks' level into the forecast by the back door. Multiplying the pre-window rates by
    this factor puts each machine at the level the model was fitted to over the whole training period;
    following recent levels is left to the backtested level rule (`autovend.validation.level`).
    """
    out = np.ones(len(machines))
    if len(machines) == 0:
        return out
    ids = full.machines["machine_id"].to_numpy()
    to_train = pd.Series(np.arange(train.n_machines), index=train.machines["machine_id"])
    train_codes = to_train.reindex(ids[machines]).to_numpy()
    to_full = pd.Series(machines, index=train_codes)
    cells = train.cells[train.cells["m"].isin(train_codes)]
    m = to_full.reindex(cells["m"].to_numpy()).to_numpy().astype(np.int64)
    k, d = cells["k"].to_numpy(dtype=np.int64), cells["d"].to_numpy(dtype=np.int64)
    n = len(m)
    phi = model.settings.phi
    ones = np.ones(n)
    rule = WindowShelves(m, k, d, np.full(n, np.inf), np.full(n, phi), np.full(n, typical_fill), ones, train.n_days)
    rule_total = pd.Series(expected_rates(rule, model)).groupby(m).sum()
    md = train.machine_days
    active = md[md["m"].isin(train_codes)].groupby("m").size()
    active.index = to_full.reindex(active.index.to_numpy()).to_numpy().astype(np.int64)
    a = assortment[assortment["m"].isin(machines)]
    am, ak = a["m"].to_numpy(dtype=np.int64), a["k"].to_numpy(dtype=np.int64)
    na = len(am)
    pre = WindowShelves(
        am,
        ak,
        np.zeros(na, dtype=np.int64),
        np.full(na, np.inf),
        a["presence"].to_numpy(dtype=float) * phi,
        np.full(na, typical_fill),
        np.ones(na),
        1,
    )
    pre_total = pd.Series(expected_rates(pre, model)).groupby(am).sum()
    per_day = rule_total.reindex(machines).fillna(0.0).to_numpy() / active.reindex(machines).to_numpy(dtype=float)
    denom = pre_total.reindex(machines).fillna(0.0).to_numpy()
    ok = (denom > 0) & np.isfinite(per_day)
    out[ok] = per_day[ok] / denom[ok]
    return out
