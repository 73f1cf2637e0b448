"""Day-by-day run of the synthetic operator: assortments, visits, restocking, prices and demand.

The operator restocks on working days every few days, reviews assortments about monthly (dropping its
weakest sellers for new picks), prices most products at reference, and now and then goes through a
spell without visits (staff shortage, site access) during which shelves run down.

The drink/snack shelf sells through the shared demand kernel (eq. 2-3) with the truth parameters.
Out-of-scope products (fresh food, ice cream, daily goods) sit in a separate compartment of some
machines: they do not enter the drink/snack choice set or its capacity, and sell by independent
Poisson demand scaled by the same daily shock, so dropping them in calibration loses nothing.

With `truth.popularity_drift` > 0 the operator is generated from another model than the one calibrated:
each product's base attraction drifts by exp(g_k d / 30), g_k ~ N(0, popularity_drift), drawn from the
stream ("popularity_drift",) so that without drift no other draw changes (a misspecification check).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.data.synth.config import SynthConfig
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.demand.shock import sigma_from_r
from autovend.rng import stream

PRICE_STEPS = np.array([0.8, 0.9, 1.1, 1.2, 1.3])
PRICE_STEP_P = np.array([0.15, 0.25, 0.3, 0.2, 0.1])
OOS_PAR = 6  # units of each out-of-scope product in the compartment after a visit


@dataclass(frozen=True)
class OperatorInputs:
    """Truth and context for one run (arrays in machine order x catalog order)."""

    config: SynthConfig
    settings: DemandSettings
    catalog: pd.DataFrame  # with truth columns omega, kept
    machines: pd.DataFrame  # with truth columns level, has_inventory, has_compartment
    b: np.ndarray  # (M, K) base attraction; 0 for out-of-scope columns
    U: np.ndarray  # (M,) no-purchase weights
    oos_level: np.ndarray  # (M,) expected out-of-scope units per day at full compartment, no shock
    kept_target: np.ndarray  # (M,) the operator's idea of each machine's daily drink/snack units
    calendar: pd.DataFrame  # one row per day: date, is_workday, day_type
    weather: pd.DataFrame  # one row per day: date, t_max_c, precip_mm


@dataclass(frozen=True)
class OperatorRun:
    """What happened: sales lines by machine-product-day, inventory counts, visits and daily truth."""

    sales: pd.DataFrame  # m, k, day, units, price
    counts: pd.DataFrame  # m, day, k, qty (after the visit's restock), machines with inventory only
    visits: pd.DataFrame  # m, day
    daily: pd.DataFrame  # m, day, xi, W_real, W_actual, expected/demand/sales kept, sales_oos, fill_open


class _Machines:
    """Mutable operator state for all machines (plain arrays; the run is one pass over days)."""

    def __init__(self, inp: OperatorInputs, rng: np.random.Generator) -> None:
        cfg = inp.config.operator
        M, K = int(inp.b.shape[0]), int(inp.b.shape[1])
        self.inp = inp
        self.rng = rng
        self.kept = inp.catalog["kept"].to_numpy()
        self.kept_idx = np.flatnonzero(self.kept)
        self.oos_idx = np.flatnonzero(~self.kept)
        self.ref = inp.catalog["ref_price"].to_numpy(dtype=float)
        self.omega = inp.catalog["omega"].to_numpy(dtype=float)
        self.cap = inp.machines["capacity"].to_numpy(dtype=float)
        self.q = np.zeros((M, K), dtype=np.int64)
        self.assort = np.zeros((M, K), dtype=bool)
        self.par = np.zeros((M, K), dtype=np.int64)
        self.price = np.broadcast_to(self.ref, (M, K)).copy()
        # the operator's fixed, noisy perception of each product's appeal at each machine
        self.belief = inp.b * np.exp(cfg.belief_noise * rng.standard_normal((M, K)))
        self.belief[:, self.oos_idx] = self.omega[self.oos_idx] * np.exp(
            cfg.belief_noise * rng.standard_normal((M, len(self.oos_idx)))
        )
        level_rank = inp.machines["level"].rank(pct=True).to_numpy()
        self.n_assort = np.round(
            cfg.assortment_min + (cfg.assortment_max - cfg.assortment_min) * (0.6 * level_rank + 0.4 * rng.random(M))
        ).astype(int)
        self.fill_target = rng.uniform(cfg.fill_target_min, cfg.fill_target_max, M)
        # working days between routine visits: high sellers are visited more often
        days_of_stock = self.fill_target * self.cap / np.maximum(inp.kept_target, 0.5)
        self.interval = np.clip(np.floor(0.45 * days_of_stock * 5 / 7), cfg.visit_interval_min, cfg.visit_interval_max)
        self.interval = self.interval.astype(int)
        self.deviating = rng.random(M) < cfg.price_deviation_machine_share
        self.next_review = (cfg.rotation_days * rng.uniform(0.5, 1.5, M)).astype(int)
        self.workdays_since = np.zeros(M, dtype=int)
        # lapses: spells without visits, when shelves run down (real records have them)
        n_days = len(inp.calendar)
        self.lapsed = np.zeros((M, n_days), dtype=bool)
        n_lapses = rng.poisson(cfg.lapse_per_month * n_days / 30.4, M)
        for m in range(M):
            for _ in range(int(n_lapses[m])):
                start = int(rng.integers(1, n_days))
                length = int(rng.integers(cfg.lapse_days[0], cfg.lapse_days[1] + 1))
                self.lapsed[m, start : start + length] = True
        self.sold_window = np.zeros((M, K), dtype=float)  # units since the last review
        self.days_window = np.zeros((M, K), dtype=float)  # days on shelf since the last review

    # -- assortment -----------------------------------------------------------------------------
    def _pick(self, m: int, candidates: np.ndarray, n: int) -> np.ndarray:
        """Choose n products among candidates: a share at random, the rest by the operator's belief."""
        cfg = self.inp.config.operator
        n = min(n, len(candidates))
        n_explore = int(round(cfg.explore_share * n))
        explore = self.rng.choice(candidates, size=n_explore, replace=False) if n_explore else np.array([], int)
        rest = np.setdiff1d(candidates, explore)
        top = rest[np.argsort(-self.belief[m, rest], kind="stable")[: n - n_explore]]
        return np.concatenate([explore, top]).astype(int)

    def _set_prices(self, m: int, products: np.ndarray) -> None:
        cfg = self.inp.config.operator
        self.price[m, products] = self.ref[products]
        if not self.deviating[m] or len(products) == 0:
            return
        off = products[self.rng.random(len(products)) < cfg.price_deviation_sku_share]
        if len(off):
            mult = self.rng.choice(PRICE_STEPS, size=len(off), p=PRICE_STEP_P)
            p = np.round(self.ref[off] * mult * 2.0) / 2.0
            self.price[m, off] = np.clip(p, np.maximum(0.5, 0.5 * self.ref[off]), 2.0 * self.ref[off])

    def initial_assortment(self, m: int) -> None:
        """Stock a machine on day 0: drinks/snacks shelf and, if present, the compartment."""
        chosen = self._pick(m, self.kept_idx, int(self.n_assort[m]))
        self.assort[m, chosen] = True
        self._set_prices(m, chosen)
        if self.inp.machines["has_compartment"].iat[m]:
            n_oos = int(self.rng.integers(6, 15))
            oos = self._pick(m, self.oos_idx, n_oos)
            self.assort[m, oos] = True
        self._set_par(m)

    def _set_par(self, m: int) -> None:
        """Par levels: enough for the visit interval at believed or observed rates, within the fill target."""
        cfg = self.inp.config.operator
        shelf = np.flatnonzero(self.assort[m] & self.kept)
        if len(shelf):
            belief = self.belief[m, shelf]
            rate_belief = self.inp.kept_target[m] * belief / belief.sum()
            seen = self.days_window[m, shelf] >= 7
            rate_obs = self.sold_window[m, shelf] / np.maximum(self.days_window[m, shelf], 1.0)
            rate = np.where(seen, 0.2 * rate_belief + 0.8 * rate_obs, rate_belief)
            horizon = self.interval[m] * 7 / 5 + 1
            par = np.clip(np.ceil(rate * horizon * 1.5), 2, cfg.par_max)
            budget = self.fill_target[m] * self.cap[m]
            if par.sum() > budget:
                par = np.maximum(1, np.floor(par * budget / par.sum()))
            self.par[m, shelf] = par.astype(np.int64)
        oos = np.flatnonzero(self.assort[m] & ~self.kept)
        self.par[m, oos] = OOS_PAR

    def review(self, m: int) -> np.ndarray:
        """Replace the weakest sellers; returns the products removed."""
        cfg = self.inp.config.operator
        shelf = np.flatnonzero(self.assort[m] & self.kept)
        rate = self.sold_window[m, shelf] / np.maximum(self.days_window[m, shelf], 1.0)
        n_drop = int(round(cfg.rotation_share * len(shelf)))
        order = np.lexsort((self.belief[m, shelf], rate))
        drop = shelf[order[:n_drop]]
        candidates = np.setdiff1d(self.kept_idx, shelf)
        add = self._pick(m, candidates, n_drop)
        self.assort[m, drop] = False
        self.par[m, drop] = 0
        self.assort[m, add] = True
        self._set_prices(m, add)
        self._set_par(m)
        self.sold_window[m] = 0.0
        self.days_window[m] = 0.0
        return drop


def popularity_drift(seed: int, n_products: int, sd: float) -> np.ndarray | None:
    """Per-product monthly log drift g_k ~ N(0, sd) from the stream ("popularity_drift",); None when sd is 0."""
    if sd <= 0:
        return None
    return sd * stream(seed, "popularity_drift").standard_normal(n_products)


def run_operator(inp: OperatorInputs) -> OperatorRun:
    """Simulate the operator and its customers over the calendar; see the module docstring."""
    cfg = inp.config
    settings = inp.settings
    M, K = inp.b.shape
    D = len(inp.calendar)
    rng = stream(cfg.seed, "operator")
    demand_rng = stream(cfg.seed, "demand")
    st = _Machines(inp, rng)
    site_types = inp.machines["site_type"].to_numpy()
    cat_l1 = inp.catalog["category_l1"].to_numpy()
    kept_idx, oos_idx = st.kept_idx, st.oos_idx
    # the drink/snack shelf's demand: the one demand model, as the simulator and the replay use it
    model = DemandModel(
        b=inp.b[:, kept_idx],
        U=inp.U,
        capacity=st.cap,
        site_types=tuple(str(s) for s in site_types),
        categories=tuple(str(c) for c in cat_l1[kept_idx]),
        settings=settings,
        shock=ShockProcess(sigma=sigma_from_r(cfg.truth.r), rho=cfg.truth.rho),
    )
    xi = model.shock.draw(stream(cfg.seed, "shock"), M, D)
    drift = popularity_drift(cfg.seed, len(kept_idx), cfg.truth.popularity_drift)
    has_inv = inp.machines["has_inventory"].to_numpy()
    oos_omega = st.omega[oos_idx]
    day_mult_site = {
        dt: np.array([settings.environment.calendar.day_type[s][dt] for s in site_types])
        for dt in ("workday", "weekend", "holiday")
    }

    sales_parts: list[np.ndarray] = []
    price_parts: list[np.ndarray] = []
    count_parts: list[np.ndarray] = []
    visit_parts: list[tuple[int, int]] = []
    daily = np.zeros((M, D, 8))

    for m in range(M):
        st.initial_assortment(m)
    st.q[st.assort] = st.par[st.assort]
    for m in np.flatnonzero(has_inv).tolist():
        ks = np.flatnonzero(st.assort[m])
        count_parts.append(np.column_stack([np.full(len(ks), m), np.zeros(len(ks), int), ks, st.q[m, ks]]))

    workday = inp.calendar["is_workday"].to_numpy()
    day_types = inp.calendar["day_type"].to_numpy()
    t_max = inp.weather["t_max_c"].to_numpy(dtype=float)
    precip = inp.weather["precip_mm"].to_numpy(dtype=float)

    for d in range(D):
        # ---- operator visits (working days only, before the day's sales) ----
        if d > 0 and workday[d]:
            st.workdays_since += 1
            fill = st.q[:, kept_idx].sum(axis=1) / st.cap
            due = ((st.workdays_since >= st.interval) | (fill < cfg.operator.low_fill_trigger)) & ~st.lapsed[:, d]
            for m in np.flatnonzero(due).tolist():
                removed = np.array([], dtype=int)
                if d >= st.next_review[m]:
                    removed = st.review(m)
                    st.next_review[m] = d + int(cfg.operator.rotation_days * rng.uniform(0.8, 1.2))
                    st.q[m, removed] = 0
                else:
                    st._set_par(m)
                on = np.flatnonzero(st.assort[m])
                st.q[m, on] = np.maximum(st.q[m, on], st.par[m, on])
                st.workdays_since[m] = 0
                visit_parts.append((m, d))
                if has_inv[m]:
                    rows = [np.column_stack([np.full(len(on), m), np.full(len(on), d), on, st.q[m, on]])]
                    zero = removed[rng.random(len(removed)) < cfg.operator.zero_count_share]
                    if len(zero):
                        rows.append(
                            np.column_stack(
                                [np.full(len(zero), m), np.full(len(zero), d), zero, np.zeros(len(zero), int)]
                            )
                        )
                    count_parts.append(np.concatenate(rows))

        # ---- demand on the drink/snack shelf: the shared kernel ----
        if drift is not None:
            model = model.with_b(inp.b[:, kept_idx] * np.exp(drift * d / 30.0)[None, :])
        env = model.environment(t_max[d], precip[d], day_types[d])
        qk = st.q[:, kept_idx]
        w_real = model.attraction(qk)
        w = model.attraction(qk, st.price[:, kept_idx] / st.ref[kept_idx], env)
        rates = model.expected(qk, st.price[:, kept_idx] / st.ref[kept_idx], env, xi[:, d])
        demand = model.sample_poisson(demand_rng, rates)
        sold_k = np.minimum(demand, qk).astype(np.int64)

        # ---- the out-of-scope compartment ----
        qo = st.q[:, oos_idx]
        on_o = st.assort[:, oos_idx]
        wo = oos_omega[None, :] * on_o
        share = np.divide(
            wo, wo.sum(axis=1, keepdims=True), out=np.zeros_like(wo), where=wo.sum(axis=1, keepdims=True) > 0
        )
        rate_o = (
            (inp.oos_level * day_mult_site[day_types[d]] * xi[:, d])[:, None]
            * share
            * np.minimum(1.0, qo / settings.phi)
        )
        sold_o = np.minimum(demand_rng.poisson(rate_o), qo)

        sold = np.zeros((M, K), dtype=np.int64)
        sold[:, kept_idx] = sold_k
        sold[:, oos_idx] = sold_o
        st.q -= sold
        st.sold_window += sold
        st.days_window += st.assort
        mm, kk = np.nonzero(sold)
        sales_parts.append(np.column_stack([mm, kk, np.full(len(mm), d), sold[mm, kk]]))
        price_parts.append(st.price[mm, kk])
        daily[:, d, 0] = xi[:, d]
        daily[:, d, 1] = w_real.sum(axis=1)
        daily[:, d, 2] = w.sum(axis=1)
        daily[:, d, 3] = model.purchase_rate(w, xi[:, d])
        daily[:, d, 4] = demand.sum(axis=1)
        daily[:, d, 5] = sold_k.sum(axis=1)
        daily[:, d, 6] = sold_o.sum(axis=1)
        daily[:, d, 7] = qk.sum(axis=1) / st.cap

    sales = np.concatenate(sales_parts) if sales_parts else np.zeros((0, 4), int)
    sales_df = pd.DataFrame(sales, columns=["m", "k", "day", "units"])
    sales_df["price"] = np.concatenate(price_parts) if price_parts else np.zeros(0)
    counts = np.concatenate(count_parts) if count_parts else np.zeros((0, 4), int)
    counts_df = pd.DataFrame(counts, columns=["m", "day", "k", "qty"])
    visits_df = pd.DataFrame(visit_parts, columns=["m", "day"])
    mi, di = np.meshgrid(np.arange(M), np.arange(D), indexing="ij")
    daily_df = pd.DataFrame(
        {
            "m": mi.ravel(),
            "day": di.ravel(),
            "xi": daily[:, :, 0].ravel(),
            "W_real": daily[:, :, 1].ravel(),
            "W_actual": daily[:, :, 2].ravel(),
            "expected_kept": daily[:, :, 3].ravel(),
            "demand_kept": daily[:, :, 4].ravel(),
            "sales_kept": daily[:, :, 5].ravel(),
            "sales_oos": daily[:, :, 6].ravel(),
            "fill_open": daily[:, :, 7].ravel(),
        }
    )
    return OperatorRun(sales=sales_df, counts=counts_df, visits=visits_df, daily=daily_df)
