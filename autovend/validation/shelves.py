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

from autovend.calibration.availability import KEEP, Availability
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


def outlook_assortment(availability: Availability, train_ids: np.ndarray, full: Panel, n_days: int) -> pd.DataFrame:
    """(m, k, d, presence) of sales-only machines in the window, from the training chains (`availability`).

    Each pair's state on the last training day, carried forward by its machine's transition matrix without a
    sale seen (`Availability.on_after`): the chance the product is on the shelf on each window day, known
    before the window. Pairs below `KEEP` on a day are left out. m is the machine's code in `full`
    (`train_ids`: the training panel's machine ids in code order).
    """
    on = availability.on_after(n_days)
    to_full = pd.Series(np.arange(full.n_machines), index=full.machines["machine_id"])
    m_full = to_full.reindex(train_ids[availability.days.pair_m]).to_numpy()
    if np.isnan(m_full).any():  # every machine that sold before the window sold in the records
        raise ValueError("a machine of the training panel is missing from the full panel")
    pair, d = np.nonzero(on > KEEP)
    return pd.DataFrame(
        {
            "m": m_full.astype(np.int64)[pair],
            "k": availability.days.pair_k[pair].astype(np.int64),
            "d": d.astype(np.int64),
            "presence": on[pair, d],
        }
    ).sort_values(["m", "d", "k"], kind="stable", ignore_index=True)


def outlook_shelves(
    full: Panel, outlook: pd.DataFrame, settings: DemandSettings, start_day: int, machines: np.ndarray, fill: float
) -> WindowShelves:
    """The window's cells of `machines` from their outlook: facing P(ON) (depth phi x presence), stock unknown."""
    a = outlook[outlook["m"].isin(machines)]
    m, k, d = (a[c].to_numpy(dtype=np.int64) for c in ("m", "k", "d"))
    depth = a["presence"].to_numpy(dtype=float) * settings.phi
    n = len(m)
    env = _env(full, settings, m, k, d + start_day)
    return WindowShelves(m, k, d, np.full(n, np.inf), depth, np.full(n, fill), env, full.n_days - start_day)


PAIR_PRIOR_BOUNDS = (0.05, 100.0)  # the empirical-Bayes prior's shape a (pair factors ~ Gamma(a, a), mean 1)


def pair_prior_shape(units: np.ndarray, expected: np.ndarray) -> float:
    """The shape a of the Gamma(a, a) prior of the pair factors, by maximum marginal likelihood (negative binomial).

    units ~ Poisson(f x expected), f ~ Gamma(a, a): how far, on this source's training records, pairs sell from
    what the model expects of them decides how much a pair's own record moves its factor.
    """
    from scipy import optimize

    from autovend.calibration.popularity import nb_loglik

    ok = expected > 0
    y, e = units[ok], expected[ok]

    def negative(log_a: float) -> float:
        a = float(np.exp(log_a))
        return -float(np.sum(nb_loglik(a, a, y, e)))

    lo, hi = (float(np.log(b)) for b in PAIR_PRIOR_BOUNDS)
    return float(np.exp(optimize.minimize_scalar(negative, bounds=(lo, hi), method="bounded").x))


@dataclass(frozen=True)
class TrainingFactors:
    """Sales-only machines' forecast factors from training (full codes): per pair, and each machine's daily units."""

    pair: pd.Series  # (m, k) -> (units + a) / (expected + a) over the pair's training days (a: `pair_prior_shape`)
    daily: pd.Series  # m -> mean daily units over the machine's training days

    def of(self, shelves: WindowShelves, model: DemandModel) -> np.ndarray:
        """Each window cell's factor: its pair's (1 without training days), then its machine's level.

        The level puts the machine's window total, at a neutral calendar, at its training mean daily units:
        the pairs it sold in training stand for the whole assortment, including the products the operator will
        put on in the window, which no record before it shows.
        """
        pair = self.pair.reindex(pd.MultiIndex.from_arrays([shelves.m, shelves.k])).fillna(1.0).to_numpy(dtype=float)
        flat = dataclasses.replace(shelves, env=np.ones(len(shelves.m)))
        base = pd.Series(expected_rates(flat, model) * pair).groupby(shelves.m).sum()
        level = self.daily.reindex(base.index) * shelves.n_days / base
        level = level.where(np.isfinite(level) & (base > 0), 1.0)
        return pair * level.reindex(shelves.m).to_numpy(dtype=float)


def training_factors(
    availability: Availability, train: Panel, train_ids: np.ndarray, full: Panel, model: DemandModel, fill: float
) -> TrainingFactors:
    """What training says of the sales-only machines' shelves beyond the chains (module docstring of `window`).

    The model's expected units on each pair's training days (depth phi x P(ON), neutral weather, reference
    prices, the calendar applied), against its realised units: a pair's factor is their ratio, shrunk toward 1 by
    its prior's shape (the stock and facings the operator kept, which sales alone show only through what sold:
    a fast seller restocked to a few units sells its few units, not its demand), with a empirical-Bayes prior fitted
    on the same training pairs (`pair_prior_shape`). Each machine's level is its
    training mean daily units (`TrainingFactors.of`), whatever the shelves' unobserved fill (which the
    calibration's fit of u carries and the replay cannot).
    """
    cells = availability.cells()
    to_full = pd.Series(np.arange(full.n_machines), index=full.machines["machine_id"])
    m = to_full.reindex(train_ids[cells["m"].to_numpy()]).to_numpy().astype(np.int64)
    k, d = cells["k"].to_numpy(dtype=np.int64), cells["d"].to_numpy(dtype=np.int64)
    depth = cells["avail"].to_numpy(dtype=float) * model.settings.phi
    n = len(m)
    shelves = WindowShelves(
        m, k, d, np.full(n, np.inf), depth, np.full(n, fill), _env(train, model.settings, cells["m"].to_numpy(), k, d),
        train.n_days,
    )  # fmt: skip
    expected = expected_rates(shelves, model)
    key = pd.MultiIndex.from_arrays([m, k])
    exp_pair = pd.Series(expected, index=key).groupby(level=[0, 1]).sum()
    units_pair = pd.Series(cells["units"].to_numpy(dtype=float), index=key).groupby(level=[0, 1]).sum()
    a = pair_prior_shape(units_pair.to_numpy(), exp_pair.reindex(units_pair.index).to_numpy())
    pair = (units_pair + a) / (exp_pair + a)
    daily = train.machine_days.groupby("m")["units"].mean()
    daily.index = to_full.reindex(train_ids[daily.index.to_numpy()]).to_numpy().astype(np.int64)
    return TrainingFactors(pair, daily)
