"""The rule-based baseline: newsvendor targets, periodic order-up-to replenishment, sales-led assortment.

`BaselineAgent` is a deterministic operator that acts only through the tools of a `ToolSession`
and uses only what any agent can observe: the catalog, the calendar, the public rules of the
system prompt, the daily observation, and the operating records its own actions produce. It draws
no random numbers. Its settings are `BaselineConfig` (documented defaults).

A day, in order:

1. *Observe.* Yesterday's sales per machine and product (`query_sql` on `daily_sales`), the
   warehouse by product (`get_warehouse`), open orders by product (`query_sql` on `orders`).
   The agent keeps its own book of shelves (what it put there minus what sold), prices and
   exposure (a product-day counts as min(units, facing) / facing of a full day on the shelf).
2. *Clean.* Discard warehouse units that are expired or expire within 7 days (restocks take the
   earliest-expiring units first, and such units could not be sold before a weekly visit); the
   warehouse then never holds such units (units taken off shelves that would are discarded at
   once). Stock of products no machine has carried for `dead_stock_days` (visits meanwhile put it
   on shelves with room to spare) is discarded when it would expire before the run ends or its
   rent to the end exceeds its cost.
3. *Estimate.* Per machine and product, the attraction over the rolling window is units sold per
   exposure-day, shrunk towards a prior; the machine's sales a day (over its stocked days) are then
   split among the products it carries in proportion to attraction, since the products of one
   machine share its customers. The prior is the machine's sales per exposure-day times a
   relative index of the product, pooled over all machines (every sale is measured against its
   machine's level), shrunk to its subcategory, and adjusted by a site-type x category factor:
   a product that sells well at one machine is expected to sell at others of the same kind.
   Variability: var = mu + mu^2 / r with r from the machine's daily totals (negative binomial).
4. *Prices.* Local gross-profit trials: the machines of a price group (by default the whole
   network; `price_groups="site_type"` gives each site type its own) price every product at one
   multiplier of its reference price. A trial compares the incumbent multiplier with a candidate
   one step away in a crossover: for the first half of `trial_days` half of the machines take the
   candidate, then the halves swap. The candidate is kept if gross profit a day under it beats the
   incumbent's by `min_gain` (mean over machines of the log ratio, so each machine is its own
   control and day-to-day effects fall on both arms). Trials keep going in the direction that last
   won and turn around when one fails. All products of a machine move together because customers
   substitute between them: a product-by-product trial would mostly measure demand moved from its
   neighbours.
5. *Visits* (working days only). Every machine is served on a cycle of H days: weekly, spread over
   the weekdays, or shorter when that earns more gross profit a day net of the visit fee (for each
   H the targets are fitted to the machine and expected sales are E[min(D_H, S)]). Extra visits:
   when expiring units must come off before the next working day, or when the shelf would fall
   below `low_stock_share` of capacity before the next service and the gross profit at stake
   covers the visit fee. A scheduled visit is skipped when the units it would bring cannot pay the
   fee. At a visit: units that would expire before the next visit come off (and are discarded),
   the assortment is reviewed, dropped products still on the shelf are taken off when the carried
   ones need their room, and the shelf is filled from the warehouse (never beyond stock or
   capacity): first the carried products' expected needs to the next visit, then a facing each of
   paid-for stock that no machine carries (it sells rather than being thrown away), then the rest
   of the carried products' targets.
6. *Targets.* Order-up-to levels per (machine, product): S = mu * H + z * sd_H with H the days to
   the next visit and z from the newsvendor critical ratio cu / (cu + co): cu = unit margin at the
   machine's price, co = holding (no rent on shelves) plus the cost times the probability that the
   marginal unit expires before it sells. S is at least the facing depth, capped by what sells
   within its shelf life, and the machine's capacity is shared out in proportion to demand
   (a fuller machine sells more, and shelf space costs nothing).
7. *Procurement* (every day, remote and free): echelon order-up-to per product over the machines
   that carry it: reorder level = the shelves' targets + demand over the planned lead time + z *
   its sd (z from rent and spoilage against the margin; none for products still on trial);
   position = warehouse (usable) + in transit + those shelves; below the reorder level, order up
   to `order_cover_days` of demand above it, rounded to lots, within the cash floor.
8. *Assortment* (at visits, after `min_trial_days` of exposure): drop products whose expected
   gross profit a day is below `drop_ratio` x the machine's median (they sell down, unrestocked);
   fill free slots with untried products (exploration, while `explore_until_day`) and with the
   best-scoring products proven elsewhere; swap the weakest for a proven product scoring
   `swap_ratio` times more. A product is replaced only if the gain expected over the rest of the
   run exceeds the value of its units that no other machine would use. The opening assortment
   (day 1, nothing sold yet) spreads `starter_skus` products per machine over every subcategory,
   highest reference margin first, giving different machines different products so that the
   network explores broadly.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr, ndtri

from autovend.agents.baseline_config import BaselineConfig
from autovend.errors import ConfigError
from autovend.tools.prompts import prompt_facts

if TYPE_CHECKING:
    from autovend.tools.session import ToolResult, ToolSession

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

STATE_FORMAT = "autovend-baseline-state"
STATE_VERSION = 1
PAGE = 50  # rows per page of the paginated tools (their maximum)
SQL_ROWS = 500  # rows per query_sql result (its maximum)
BATCH = 100  # items per mutation call (its maximum)
EXPIRY_WINDOW = 7  # days covered by the tools' "expiring within 7 days" counts
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MAX_DISPERSION = 50.0  # r above this is practically Poisson
LOOKAHEAD_DAYS = 40  # how far the visit schedule is searched


# ------------------------------------------------------------------------------------------------ pure rules


def newsvendor_z(cu: npt.ArrayLike, co: npt.ArrayLike, z_max: float) -> FloatArray:
    """Safety factor z = Phi^-1(cu / (cu + co)), clipped to [0, z_max]; 0 where the margin cu <= 0."""
    cu = np.asarray(cu, dtype=float)
    co = np.maximum(np.asarray(co, dtype=float), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(cu > 0, cu / (cu + co), 0.5)
    z = ndtri(np.clip(ratio, 0.5, 1.0))
    return np.clip(z, 0.0, z_max)


def unsold_probability(stock: npt.ArrayLike, mean: npt.ArrayLike, var: npt.ArrayLike) -> FloatArray:
    """P(demand < stock) under a normal approximation: the chance that the stock-th unit is still unsold."""
    stock, mean, var = (np.asarray(x, dtype=float) for x in (stock, mean, var))
    sd = np.sqrt(np.maximum(var, 1e-9))
    return ndtr((stock - 0.5 - mean) / sd)


def shelf_targets(
    cycle_need: npt.ArrayLike,
    rate: npt.ArrayLike,
    limit: npt.ArrayLike,
    room: int,
    facing: int,
    fill: bool = True,
) -> IntArray:
    """Target units of each carried product of one machine, filling `room` units of capacity.

    Each product gets max(facing, ceil(cycle_need)), capped by its `limit` (spoilage guard). If the
    targets exceed the room, the part above the facing is scaled down (and, if even the facings do
    not fit, only the fastest products keep theirs); if they leave room over and `fill` is set, it is
    shared out in proportion to `rate` among products below their limit (a fuller machine sells more).
    """
    need = np.asarray(cycle_need, dtype=float)
    rate = np.maximum(np.asarray(rate, dtype=float), 0.0)
    cap = np.maximum(np.asarray(limit, dtype=float), facing).astype(np.int64)
    n = len(need)
    S = np.zeros(n, dtype=np.int64)
    if n == 0 or room <= 0:
        return S
    order = np.lexsort((np.arange(n), -rate))  # fastest first, ties in given order
    if n * facing >= room:
        keep = order[: room // facing]
        S[keep] = facing
        rest = room - len(keep) * facing
        if rest and len(keep) < n:
            S[order[len(keep)]] = rest
        return S
    S = np.minimum(np.maximum(np.ceil(need - 1e-9), facing), cap).astype(np.int64)
    total = int(S.sum())
    if total > room:
        extra = (S - facing).astype(float)
        budget = room - n * facing
        add = np.floor(extra * budget / extra.sum()).astype(np.int64)
        S = facing + add
        left = room - int(S.sum())
        for i in order:  # whole units lost to flooring go to the fastest products
            if left <= 0:
                break
            if S[i] < facing + extra[i]:
                S[i] += 1
                left -= 1
        return S
    spare = room - total if fill else 0
    for _ in range(3):  # share the spare room by rate among products below their cap
        if spare <= 0:
            break
        open_ = (cap > S) & (rate > 0)
        if not open_.any():
            break
        w = np.where(open_, rate, 0.0)
        add = np.minimum(np.floor(spare * w / w.sum()).astype(np.int64), cap - S)
        if add.sum() == 0:
            for i in order:
                if spare <= 0:
                    break
                if S[i] < cap[i] and rate[i] > 0:
                    S[i] += 1
                    spare -= 1
            break
        S += add
        spare -= int(add.sum())
    return S


def normal_loss(z: npt.ArrayLike) -> FloatArray:
    """Standard normal loss function E[(Z - z)^+] = pdf(z) - z (1 - Phi(z))."""
    z = np.asarray(z, dtype=float)
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) - z * ndtr(-z)


def round_lots(qty: npt.ArrayLike, lot: int) -> IntArray:
    """Order quantities: below two lots as they are, otherwise rounded up to whole lots."""
    q = np.ceil(np.asarray(qty, dtype=float) - 1e-9).astype(np.int64)
    q = np.maximum(q, 0)
    if lot <= 1:
        return q
    big = q >= 2 * lot
    q[big] = -(-q[big] // lot) * lot
    return q


def price_fen(multiplier_pct: int, ref_fen: npt.ArrayLike, band: tuple[float, float]) -> IntArray:
    """Prices in fen: the reference price times `multiplier_pct`/100, rounded, kept inside the band."""
    ref = np.asarray(ref_fen, dtype=np.int64)
    p = (ref * int(multiplier_pct) + 50) // 100
    lo = np.ceil(ref * band[0] - 1e-9).astype(np.int64)
    hi = np.floor(ref * band[1] + 1e-9).astype(np.int64)
    return np.clip(p, lo, hi)


def crossover_effect(gp_sum: npt.ArrayLike, days: npt.ArrayLike) -> float | None:
    """Mean over machines of log(gross profit a day under the candidate / under the incumbent).

    `gp_sum` and `days` are (machines, 2): column 0 the incumbent arm, column 1 the candidate. Machines
    without days in both arms or without a positive gross profit in either are left out; None if none is left.
    """
    gp = np.asarray(gp_sum, dtype=float)
    n = np.asarray(days, dtype=float)
    ok = (n > 0).all(axis=1)
    mean = np.divide(gp, n, out=np.zeros_like(gp), where=n > 0)
    ok &= (mean > 0).all(axis=1)
    if not ok.any():
        return None
    return float(np.mean(np.log(mean[ok, 1] / mean[ok, 0])))


def crossover_arm(group: npt.ArrayLike, day: int, start: npt.ArrayLike, trial_days: int) -> IntArray:
    """Arm of each machine on `day` of a crossover trial begun on `start`: 0 incumbent, 1 candidate.

    Group-0 machines take the incumbent in the first half and the candidate in the second; group 1 the reverse.
    """
    half = (day - np.asarray(start, dtype=np.int64)) // (trial_days // 2)
    return (np.asarray(group, dtype=np.int64) + half) % 2


def dispersion(daily_totals: npt.ArrayLike, default: float) -> float:
    """r of a negative binomial fitted by moments to daily totals (mean^2 / (var - mean)), in [1, 50]."""
    x = np.asarray(daily_totals, dtype=float)
    if len(x) < 7:
        return default
    mean = float(x.mean())
    var = float(x.var(ddof=1))
    if mean <= 0 or var <= mean:
        return MAX_DISPERSION
    return float(np.clip(mean * mean / (var - mean), 1.0, MAX_DISPERSION))


def spread_quota(sizes: npt.ArrayLike, total: int) -> IntArray:
    """`total` slots shared among groups in proportion to sqrt(size) (largest remainders), at most size each."""
    sizes = np.asarray(sizes, dtype=np.int64)
    w = np.sqrt(sizes.astype(float))
    exact = total * w / w.sum()
    q = np.minimum(np.floor(exact).astype(np.int64), sizes)
    order = np.lexsort((np.arange(len(sizes)), -(exact - q)))
    left = total - int(q.sum())
    while left > 0 and (q < sizes).any():
        for i in order:
            if left <= 0:
                break
            if q[i] < sizes[i]:
                q[i] += 1
                left -= 1
    return q


# ------------------------------------------------------------------------------------------------ state


@dataclass
class _Static:
    """What the agent reads once on day 1: rules, catalog, machines, calendar."""

    horizon: int
    visit_fee: float
    rent: float  # warehouse rent per unit and day
    lead_days: int  # promised lead time
    band: tuple[float, float]
    sku_ids: list[str]
    ref_fen: IntArray
    cost: FloatArray
    life: IntArray
    l1: IntArray  # category code
    l2: IntArray  # subcategory code
    n_l1: int
    n_l2: int
    device_ids: list[str]
    site: IntArray  # site-type code
    site_names: list[str]
    n_site: int
    capacity: IntArray
    weekday: IntArray  # by day number (index 0 unused), 0 = Monday
    workday: BoolArray  # by day number


@dataclass
class _State:
    """What changes from day to day (all of it goes into `state_dict`)."""

    day_done: int  # last day ended
    shelf: IntArray  # (M, K) units on each shelf, as the agent's book keeps them
    price: IntArray  # (M, K) prices in force, fen
    units_hist: npt.NDArray[np.int16]  # (W, M, K) units sold, ring by day % W
    expo_hist: npt.NDArray[np.float32]  # (W, M, K) exposure-days, ring by day % W
    gp_hist: FloatArray  # (W, M) gross profit of each machine-day, ring by day % W
    cum_units: FloatArray  # (M, K) units sold since the start, older days discounted (memory_half_life_days)
    cum_expo: FloatArray  # (M, K) exposure-days, discounted alike
    active: BoolArray  # (M, K) carried (restocked) products
    phase_out: BoolArray  # (M, K) dropped products still selling down
    dropped: BoolArray  # (M, K) judged poor at that machine: not offered there again
    active_since: IntArray  # (M, K)
    inactive_since: IntArray  # (K,) first day a product was carried nowhere (0 while carried)
    last_visit: IntArray  # (M,) 0 = never
    cycle: IntArray  # (M,) service interval chosen at the last visit, days
    first_visit: IntArray  # (M,)
    slot: IntArray  # (M,) weekday of the weekly service
    must_visit_by: IntArray  # (M,) earliest expiry day on the shelf, 0 = none
    opening_day: int
    price_group: IntArray  # (M,) the price group of each machine (one multiplier per group)
    price_group_names: list[str]
    group: IntArray  # (M,) crossover half of each machine within its price group (0 / 1)
    mult: IntArray  # (G,) incumbent price multiplier of each price group, percent
    cand: IntArray  # (G,) candidate multiplier of the running trial, percent
    direction: IntArray  # (G,) +1 / -1
    trial_start: IntArray  # (G,) 0 = no trial running
    fails: IntArray  # (G,) trials lost in a row
    hold_until: IntArray  # (G,)
    arm_hist: npt.NDArray[np.int8]  # (W, M) arm of each machine-day: -1 none, 0 incumbent, 1 candidate
    gp_sum: FloatArray  # (M, 2) gross profit by arm in the running trial
    gp_n: IntArray  # (M, 2) days by arm
    trials: list[tuple[int, str, int, int, float, bool]]  # (day, group, incumbent %, candidate %, effect, kept)


@dataclass(frozen=True)
class _Estimates:
    """Demand estimates of one day."""

    mu: FloatArray  # (M, K) units a day
    prior: FloatArray  # (M, K) the prior part (what a product is expected to sell at a machine untried)
    r: FloatArray  # (M,) dispersion
    machine_rate: FloatArray  # (M,) units a day
    gp_per_unit: FloatArray  # (M,)
    margin: FloatArray  # (M, K) at the incumbent multiplier, CNY
    cycle: IntArray  # (M,) service interval, days (the state's, chosen at each visit)


# ------------------------------------------------------------------------------------------------ the agent


class BaselineAgent:
    """The rule-based baseline (see the module docstring); `Agent` protocol."""

    name = "baseline"

    def __init__(self, config: BaselineConfig | None = None, seed: int = 0) -> None:
        self.config = config or BaselineConfig()
        self.seed = int(seed)  # kept for the record: the baseline draws no random numbers
        self._st: _Static | None = None
        self._s: _State | None = None
        self._obs: dict[str, Any] | None = None
        self._sku_index: dict[str, int] = {}
        self._dev_index: dict[str, int] = {}

    # -------------------------------------------------------------------------------- protocol

    def start(self, session: ToolSession) -> None:
        """Read the rules, catalog, machines and calendar; choose the opening assortment."""
        cfg = self.config
        facts = prompt_facts(session.world)
        band = (float(facts["band_lo"]), float(facts["band_hi"]))
        lo, hi = cfg.multiplier_bounds
        if not band[0] <= lo and hi <= band[1]:
            raise ConfigError(
                f"multiplier_bounds {cfg.multiplier_bounds} leave the price band {band} of this world; "
                "choose bounds inside it"
            )
        obs = session.observation()
        self._obs = obs
        catalog = _all_rows(session, "get_catalog", {})
        cal = _ok(session.call("get_calendar", {"days_ahead": 400}), "get_calendar")
        horizon = int(facts["horizon"])
        st = _static_from(facts, band, horizon, catalog, obs, cal)
        self._st = st
        self._index()
        M, K, W = len(st.device_ids), len(st.sku_ids), cfg.window_days
        start_pct = round(cfg.start_multiplier * 100)
        if cfg.price_groups == "site_type":
            pgroup, pnames = st.site.copy(), list(st.site_names)
        else:
            pgroup, pnames = np.zeros(M, dtype=np.int64), ["network"]
        s = _State(
            day_done=0,
            shelf=np.zeros((M, K), dtype=np.int64),
            price=np.tile(st.ref_fen, (M, 1)),
            units_hist=np.zeros((W, M, K), dtype=np.int16),
            expo_hist=np.zeros((W, M, K), dtype=np.float32),
            gp_hist=np.zeros((W, M)),
            cum_units=np.zeros((M, K)),
            cum_expo=np.zeros((M, K)),
            active=np.zeros((M, K), dtype=bool),
            phase_out=np.zeros((M, K), dtype=bool),
            dropped=np.zeros((M, K), dtype=bool),
            active_since=np.zeros((M, K), dtype=np.int64),
            inactive_since=np.zeros(K, dtype=np.int64),
            last_visit=np.zeros(M, dtype=np.int64),
            cycle=np.full(M, cfg.max_cycle_days, dtype=np.int64),
            first_visit=np.zeros(M, dtype=np.int64),
            slot=np.arange(M, dtype=np.int64) % 5,
            must_visit_by=np.zeros(M, dtype=np.int64),
            opening_day=session.day,
            price_group=pgroup,
            price_group_names=pnames,
            group=_groups(pgroup),
            mult=np.full(len(pnames), start_pct, dtype=np.int64),
            cand=np.full(len(pnames), start_pct, dtype=np.int64),
            direction=np.ones(len(pnames), dtype=np.int64),
            trial_start=np.zeros(len(pnames), dtype=np.int64),
            fails=np.zeros(len(pnames), dtype=np.int64),
            hold_until=np.zeros(len(pnames), dtype=np.int64),
            arm_hist=np.full((W, M), -1, dtype=np.int8),
            gp_sum=np.zeros((M, 2)),
            gp_n=np.zeros((M, 2), dtype=np.int64),
            trials=[],
        )
        s.active[:] = starter_assortment(st, cfg.starter_skus)
        s.active_since[s.active] = session.day
        self._s = s

    def act_day(self, session: ToolSession) -> None:
        """Observe, clean, estimate, price, visit, order, then end the day (see the module docstring)."""
        if self._s is None or self._st is None:
            raise RuntimeError("call start(session) (or load_state) before act_day")
        s, st = self._s, self._st
        d = session.day
        obs = self._obs if self._obs is not None else session.observation()
        if d > 1:
            self._sync_sales(session, d - 1)
        wh = self._warehouse(session)
        transit = self._in_transit(session)
        self._clean_warehouse(session, d, wh)
        est = self._estimate(d)
        self._update_trials(d)
        mult_today = self._arms_today(d)
        avail = wh["good"].copy()  # usable warehouse units, kept up to date through the visits
        if st.workday[d]:
            for m in self._visits_today(session, d, est, avail):
                self._visit(session, m, d, est, avail, wh["next_expiry"])
        self._set_prices(session, mult_today)
        self._order(session, d, est, avail, transit, float(obs["balance"]["cash"]))
        self._record_exposure(d)
        res = session.call("end_day", {})
        s.day_done = d
        self._obs = res.content.get("observation") if res.ok else None

    def state_dict(self) -> dict[str, Any]:
        """Config, static facts and the day-to-day state: a copy (numpy arrays, lists; picklable)."""
        if self._s is None or self._st is None:
            raise RuntimeError("the agent has not started")
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "config": self.config.model_dump(mode="json"),
            "seed": self.seed,
            "static": {f.name: _copy(getattr(self._st, f.name)) for f in fields(_Static)},
            "state": {f.name: _copy(getattr(self._s, f.name)) for f in fields(_State)},
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()`; the config must be the one the state was made with."""
        if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
            raise ConfigError("this is not a baseline state of this AutoVend version; start a new run")
        if state["config"] != self.config.model_dump(mode="json"):
            raise ConfigError(
                "the saved run used other baseline settings; resume it with the same --agent-config it started with"
            )
        self.seed = int(state["seed"])
        self._st = _Static(**state["static"])
        self._s = _State(**{k: _copy(v) for k, v in state["state"].items()})
        self._obs = None
        self._index()

    # -------------------------------------------------------------------------------- observing

    def _index(self) -> None:
        assert self._st is not None
        self._sku_index = {k: i for i, k in enumerate(self._st.sku_ids)}
        self._dev_index = {d: i for i, d in enumerate(self._st.device_ids)}

    def _sync_sales(self, session: ToolSession, day: int) -> None:
        """Book the settled sales of `day`: shelves, rolling history, cumulative units, machine gross profit."""
        s, W = self._s, self.config.window_days
        assert s is not None
        sql = (
            "SELECT device_id, sku_id, units, revenue, cost FROM daily_sales "
            f"WHERE day = {int(day)} ORDER BY device_id, sku_id"
        )
        rows = _sql_rows(session, sql)
        slot = day % W
        s.units_hist[slot] = 0
        s.gp_hist[slot] = 0.0
        if not rows:
            return
        m = np.fromiter((self._dev_index[r[0]] for r in rows), dtype=np.int64, count=len(rows))
        k = np.fromiter((self._sku_index[r[1]] for r in rows), dtype=np.int64, count=len(rows))
        u = np.array([int(r[2]) for r in rows], dtype=np.int64)
        gp = np.array([float(r[3]) - float(r[4]) for r in rows])
        s.units_hist[slot, m, k] = u
        s.cum_units[m, k] += u
        s.shelf[m, k] = np.maximum(s.shelf[m, k] - u, 0)
        s.gp_hist[slot] = np.bincount(m, weights=gp, minlength=len(s.last_visit))

    def _warehouse(self, session: ToolSession) -> dict[str, IntArray]:
        """Warehouse by product: units, expired, expiring within 7 days, next expiry day, usable units."""
        K = len(self._sku_index)
        out = {key: np.zeros(K, dtype=np.int64) for key in ("units", "expired", "expiring", "next_expiry")}
        for row in _all_rows(session, "get_warehouse", {}):
            k = self._sku_index[row["sku_id"]]
            out["units"][k] = int(row["units"])
            out["expired"][k] = int(row["expired_units"])
            out["expiring"][k] = int(row["expiring_7d_units"])
            out["next_expiry"][k] = int(row["next_expiry_day"] or 0)
        out["good"] = out["units"] - out["expired"] - out["expiring"]
        return out

    def _in_transit(self, session: ToolSession) -> IntArray:
        """Units ordered and not yet arrived, by product."""
        out = np.zeros(len(self._sku_index), dtype=np.int64)
        sql = "SELECT sku_id, SUM(qty) FROM orders WHERE arrived_day IS NULL GROUP BY sku_id ORDER BY sku_id"
        for sku, qty in _sql_rows(session, sql):
            out[self._sku_index[sku]] = int(qty)
        return out

    # -------------------------------------------------------------------------------- cleaning

    def _clean_warehouse(self, session: ToolSession, d: int, wh: dict[str, IntArray]) -> None:
        """Discard expired and soon-expiring warehouse units, and dead stock not worth its rent."""
        s, st = self._s, self._st
        assert s is not None and st is not None
        carried = s.active.any(axis=0)
        s.inactive_since[carried] = 0
        s.inactive_since[~carried & (s.inactive_since == 0)] = d
        qty = wh["expired"] + wh["expiring"]
        # dead stock: carried nowhere for `dead_stock_days` (visits put it on shelves meanwhile); holding it
        # longer only adds rent when it expires before the run ends, or when the rent to the end exceeds its cost
        idle = d - s.inactive_since >= self.config.dead_stock_days
        dead = (~carried) & (s.inactive_since > 0) & idle & (wh["good"] > 0)
        if dead.any():
            expires_first = (wh["next_expiry"] > 0) & (wh["next_expiry"] <= st.horizon)
            costly = expires_first | (st.rent * (st.horizon - d + 1) > st.cost)
            qty = np.where(dead & costly, wh["units"], qty)
        ks = np.flatnonzero(qty > 0)
        if len(ks):
            _batched(session, "discard", [{"sku_id": st.sku_ids[k], "qty": int(qty[k])} for k in ks.tolist()])
            wh["units"] -= qty
            wh["expired"][ks] = 0
            wh["expiring"][ks] = 0
            wh["good"] = wh["units"].copy()

    # -------------------------------------------------------------------------------- estimates

    def _estimate(self, d: int) -> _Estimates:
        """Demand rates, priors, dispersion, machine rates and margins of today (see the module docstring)."""
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        M, K = s.shelf.shape
        units = s.units_hist.sum(axis=0, dtype=np.float64)
        expo = s.expo_hist.sum(axis=0, dtype=np.float64)
        m_units = units.sum(axis=1)
        m_expo = expo.sum(axis=1)
        n_start = max(cfg.starter_skus, 1)
        fallback = cfg.prior_units_per_machine_day / n_start
        base = np.where(m_expo > 0, m_units / np.maximum(m_expo, 1e-9), fallback)  # units per exposure-day
        # pooled relative index from all history: each product's rate against its machine's level
        cu, ce = s.cum_units, s.cum_expo
        base_cum = np.where(ce.sum(axis=1) > 0, cu.sum(axis=1) / np.maximum(ce.sum(axis=1), 1e-9), fallback)
        rel_units = cu / np.maximum(base_cum, 1e-9)[:, None]  # expo * rel
        site_l1 = st.site[:, None] * st.n_l1 + st.l1[None, :]
        n_sl = st.n_site * st.n_l1
        f_num = np.bincount(site_l1.ravel(), weights=rel_units.ravel(), minlength=n_sl)
        f_den = np.bincount(site_l1.ravel(), weights=ce.ravel(), minlength=n_sl)
        f = ((f_num + cfg.site_prior_days) / (f_den + cfg.site_prior_days)).reshape(st.n_site, st.n_l1)
        fmk = f[st.site][:, st.l1]  # (M, K)
        adj_units = rel_units / fmk
        sub_num = np.bincount(st.l2, weights=adj_units.sum(axis=0), minlength=st.n_l2)
        sub_den = np.bincount(st.l2, weights=ce.sum(axis=0), minlength=st.n_l2)
        sub = (sub_num + cfg.subcategory_prior_days) / (sub_den + cfg.subcategory_prior_days)
        idx = (adj_units.sum(axis=0) + cfg.index_prior_days * sub[st.l2]) / (ce.sum(axis=0) + cfg.index_prior_days)
        prior_attr = base[:, None] * idx[None, :] * fmk
        n0 = cfg.prior_strength_days
        attr = (units + n0 * prior_attr) / (expo + n0)  # units per exposure-day, alone on a thin shelf
        days = (s.expo_hist.sum(axis=2) > 0).sum(axis=0)  # stocked days in the window, by machine
        machine_rate = np.where(days > 0, m_units / np.maximum(days, 1), cfg.prior_units_per_machine_day)
        # products share the machine's sales: rates are the machine rate split by relative attraction
        carried = np.where(s.active, attr, 0.0).sum(axis=1)
        scale = machine_rate / np.where(carried > 0, carried, np.maximum(attr.sum(axis=1), 1e-9))
        mu = attr * scale[:, None]
        prior = prior_attr * scale[:, None]
        totals = s.units_hist.sum(axis=2)  # (W, M)
        stocked = s.expo_hist.sum(axis=2) > 0
        r = np.array([dispersion(totals[stocked[:, m], m], cfg.default_dispersion) for m in range(M)])
        gp_window = s.gp_hist.sum(axis=0)
        price = price_fen_matrix(s.mult[s.price_group], st.ref_fen, st.band) / 100.0
        margin = price - st.cost[None, :]
        fallback_gp = np.array([margin[m, s.active[m]].mean() if s.active[m].any() else 0.0 for m in range(M)])
        gp_per_unit = np.where(m_units > 0, gp_window / np.maximum(m_units, 1), fallback_gp)
        return _Estimates(mu, prior, r, machine_rate, gp_per_unit, margin, s.cycle)

    def _best_cycle(self, m: int, est: _Estimates) -> int:
        """Service interval H (days, up to `max_cycle_days`) with the most gross profit a day net of the visit fee.

        For each H the targets are set for H days and fitted to the machine; the expected sales of a
        product are E[min(D_H, S)] (normal loss function), so a short cycle pays more fees and a long
        one loses more sales to empty slots.
        """
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        ks = np.flatnonzero(s.active[m])
        if not len(ks):
            return cfg.max_cycle_days
        mu, margin = est.mu[m, ks], np.maximum(est.margin[m, ks], 0.0)
        best, best_value = cfg.max_cycle_days, -np.inf
        for H in range(1, cfg.max_cycle_days + 1):
            S = self._targets(m, est, H)
            mean = mu * H
            sd = np.sqrt(mean + mean**2 / est.r[m])
            sold = mean - sd * normal_loss((S - mean) / np.maximum(sd, 1e-9))
            value = (float((sold * margin).sum()) - st.visit_fee) / H
            if value > best_value + 1e-9:
                best, best_value = H, value
        return best

    # -------------------------------------------------------------------------------- prices

    def _update_trials(self, d: int) -> None:
        """Book yesterday's gross profit to its trial arm; settle finished trials; start new ones."""
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        W = cfg.window_days
        lo, hi = (round(x * 100) for x in cfg.multiplier_bounds)
        step = round(cfg.price_step * 100)
        if d > 1:
            arm = s.arm_hist[(d - 1) % W]
            gp = s.gp_hist[(d - 1) % W]
            for m in np.flatnonzero(arm >= 0).tolist():
                s.gp_sum[m, arm[m]] += gp[m]
                s.gp_n[m, arm[m]] += 1
        ready = bool((s.first_visit > 0).all()) and d >= cfg.trial_start_day
        for g in range(len(s.mult)):
            members = s.price_group == g
            if s.trial_start[g] and d - s.trial_start[g] >= cfg.trial_days:
                effect = crossover_effect(s.gp_sum[members], s.gp_n[members])
                kept = effect is not None and effect > np.log1p(cfg.min_gain)
                s.trials.append((d, s.price_group_names[g], int(s.mult[g]), int(s.cand[g]), effect or 0.0, kept))
                if kept:
                    s.mult[g] = s.cand[g]
                    s.fails[g] = 0
                else:
                    self._turn(g, d)
                s.trial_start[g] = 0
            if s.trial_start[g] or not ready or d < s.hold_until[g]:
                continue
            for _ in range(2):  # a step past a bound counts as a failed direction
                cand = int(s.mult[g] + s.direction[g] * step)
                if lo <= cand <= hi:
                    break
                self._turn(g, d)
            else:
                continue
            if d < s.hold_until[g]:
                continue
            s.cand[g] = cand
            s.trial_start[g] = d
            s.gp_sum[members] = 0.0
            s.gp_n[members] = 0

    def _turn(self, g: int, d: int) -> None:
        """A trial direction failed: turn around; after two failures in a row, hold the price a while."""
        s = self._s
        assert s is not None
        s.direction[g] = -s.direction[g]
        s.fails[g] += 1
        if s.fails[g] >= 2:
            s.fails[g] = 0
            s.hold_until[g] = d + self.config.hold_days

    def _arms_today(self, d: int) -> IntArray:
        """Today's multiplier of each machine: its site type's incumbent, or the candidate for its trial arm."""
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        start = s.trial_start[s.price_group]
        arm = np.where(start > 0, crossover_arm(s.group, d, start, cfg.trial_days), -1).astype(np.int8)
        s.arm_hist[d % cfg.window_days] = arm
        return np.where(arm == 1, s.cand[s.price_group], s.mult[s.price_group])

    def _set_prices(self, session: ToolSession, mult_today: IntArray) -> None:
        """Put today's multiplier on every product a machine carries or holds."""
        s, st = self._s, self._st
        assert s is not None and st is not None
        want = price_fen_matrix(mult_today, st.ref_fen, st.band)
        scope = s.active | (s.shelf > 0)
        ms, ks = np.nonzero(scope & (want != s.price))
        if not len(ms):
            return
        items = [
            {"device_id": st.device_ids[m], "sku_id": st.sku_ids[k], "price": int(want[m, k]) / 100.0}
            for m, k in zip(ms.tolist(), ks.tolist(), strict=True)
        ]
        _batched(session, "adjust_price", items)
        s.price[ms, ks] = want[ms, ks]

    # -------------------------------------------------------------------------------- visits

    def _due(self, m: int, t: int, last: int, cycle: int) -> bool:
        """Whether the service schedule calls for machine m on working day t, last served on `last`."""
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        gap = t - last
        if cycle < cfg.max_cycle_days:
            return gap >= cycle
        if gap < cfg.min_gap_days:
            return False
        return bool((st.weekday[last + 1 : t + 1] == s.slot[m]).any()) or gap >= cfg.max_cycle_days + 7

    def _next_service(self, m: int, after: int, last: int, cycle: int) -> int:
        """The first working day after `after` on which the schedule calls for machine m."""
        st = self._st
        assert st is not None
        end = min(after + LOOKAHEAD_DAYS, len(st.workday) - 1)
        for t in range(after + 1, end + 1):
            if st.workday[t] and self._due(m, t, last, cycle):
                return t
        return end

    def _next_workday(self, d: int) -> int:
        st = self._st
        assert st is not None
        for t in range(d + 1, len(st.workday)):
            if st.workday[t]:
                return t
        return len(st.workday)

    def _visits_today(self, session: ToolSession, d: int, est: _Estimates, avail: IntArray) -> list[int]:
        """Machines to serve today, the most profitable first (they get scarce stock first)."""
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        out = []
        quiet = st.horizon - d < cfg.end_quiet_days
        next_work = self._next_workday(d)
        for m in range(len(s.last_visit)):
            if not s.first_visit[m]:
                if self._opening_ready(m, d, est, avail):
                    out.append(m)
                continue
            if s.must_visit_by[m] and next_work > s.must_visit_by[m]:
                # units expire before the next working day, unless they have sold since: look again
                detail = self._detail(session, m)
                s.must_visit_by[m] = min((r[4] for r in detail if r[4]), default=0)
                if any(r[2] for r in detail) or (s.must_visit_by[m] and next_work > s.must_visit_by[m]):
                    out.append(m)
                    continue
            cycle = int(est.cycle[m])
            service = self._next_service(m, d - 1, int(s.last_visit[m]), cycle)  # first scheduled day >= d
            if service == d and not quiet:
                nxt = self._next_service(m, d, d, cycle)
                need = self._shelf_need(m, est, nxt - d)
                if need.sum() * max(est.gp_per_unit[m], 0.0) > st.visit_fee:
                    out.append(m)
                continue
            # an extra visit: the shelf would run low before its next service and the profit at stake pays the fee
            days_left = min(max(service, d + 1), st.horizon + 1) - d
            projected = int(s.shelf[m].sum()) - est.machine_rate[m] * days_left
            short = max(0.0, cfg.low_stock_share * st.capacity[m] - projected)
            if short * est.gp_per_unit[m] > st.visit_fee:
                out.append(m)
        value = est.machine_rate * est.gp_per_unit
        return sorted(out, key=lambda m: (-value[m], m))

    def _opening_ready(self, m: int, d: int, est: _Estimates, avail: IntArray) -> bool:
        """First stocking: once most of the opening stock has arrived (or after waiting long enough)."""
        s, cfg = self._s, self.config
        assert s is not None
        target = self._targets(m, est, int(est.cycle[m]))
        ks = np.flatnonzero(s.active[m])
        have = np.minimum(avail[ks], target).sum()
        waited = d - s.opening_day >= cfg.starter_wait_days
        return bool(have >= cfg.starter_stock_share * max(target.sum(), 1) or (waited and have > 0))

    def _targets(
        self,
        m: int,
        est: _Estimates,
        horizon_days: int,
        room: int | None = None,
        fill: bool = True,
        safety: bool = True,
    ) -> IntArray:
        """Order-up-to levels of machine m's carried products (in product order of `active[m]`).

        `room`: capacity they may fill; by default the capacity less the units of dropped products still
        there. `fill`: share spare room out; `safety`: add z * sd (False, with fill False: the mean needs).
        """
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        ks = np.flatnonzero(s.active[m])
        if not len(ks):
            return np.zeros(0, dtype=np.int64)
        H = max(int(horizon_days), 1)
        mu = est.mu[m, ks]
        mean_h = mu * H
        var_h = mean_h + mean_h**2 / est.r[m]
        life = st.life[ks].astype(float)
        mean_life = mu * life
        var_life = mean_life + mean_life**2 / est.r[m]
        stock0 = np.maximum(cfg.facing_units, mean_h)
        p_spoil = unsold_probability(stock0, mean_life, var_life)
        co = cfg.shelf_holding_per_unit_day * H + p_spoil * st.cost[ks]
        z = newsvendor_z(est.margin[m, ks], co, cfg.z_max) if safety else 0.0
        need = mean_h + z * np.sqrt(var_h)
        limit = np.floor(cfg.sell_through_share * mean_life)
        if room is None:
            room = int(st.capacity[m] - s.shelf[m, ~s.active[m]].sum())
        return shelf_targets(need, mu, limit, room, cfg.facing_units, fill)

    def _shelf_need(self, m: int, est: _Estimates, horizon_days: int) -> IntArray:
        """Units a visit today would bring to machine m (targets minus shelf, within free capacity)."""
        s, st = self._s, self._st
        assert s is not None and st is not None
        ks = np.flatnonzero(s.active[m])
        need = np.maximum(self._targets(m, est, horizon_days) - s.shelf[m, ks], 0)
        free = int(st.capacity[m] - s.shelf[m].sum())
        return _fit(need, free)

    def _visit(
        self, session: ToolSession, m: int, d: int, est: _Estimates, avail: IntArray, wh_next_expiry: IntArray
    ) -> None:
        """Serve machine m: take off expiring units, review the assortment, fill to target."""
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        device = st.device_ids[m]
        s.cycle[m] = self._best_cycle(m, est)
        nxt = self._next_service(m, d, d, int(s.cycle[m]))
        long_gap = nxt > d + EXPIRY_WINDOW
        detail = self._detail(session, m)
        unknown = d + EXPIRY_WINDOW + 1  # earliest possible expiry of units the 7-day counts do not cover
        expiry = {}  # product -> earliest expiry day of its units on the shelf after this visit
        soon = {}  # product -> its units on the shelf that are expired or expire within 7 days
        # 1. units that would expire before the next service come off and are thrown away
        reduce_items, delist_items, waste = [], [], []
        for k, units, expired, expiring, next_exp in detail:
            if expired == 0 and not (next_exp and next_exp <= nxt):
                if next_exp:
                    expiry[k] = next_exp
                if expiring:
                    soon[k] = expiring
                continue
            sku = st.sku_ids[k]
            if not long_gap:
                qty = min(units, expired + expiring)
                reduce_items.append({"device_id": device, "sku_id": sku, "qty": qty})
                waste.append({"sku_id": sku, "qty": qty})
                s.shelf[m, k] -= qty
                if s.shelf[m, k]:
                    expiry[k] = unknown
            else:  # a long gap ahead (holidays): take the whole product off; the fresh units can go out again
                delist_items.append({"device_id": device, "sku_id": sku})
                if expired + expiring:
                    waste.append({"sku_id": sku, "qty": expired + expiring})
                self._returned(k, units - expired - expiring, next_exp, d, avail, wh_next_expiry)
                s.shelf[m, k] = 0
        if reduce_items:
            _batched(session, "reduce", reduce_items)
        if delist_items:
            _batched(session, "delist", delist_items)
        if waste:
            _batched(session, "discard", waste)
        # 2. assortment; dropped products still on the shelf make way when the carried ones need the room
        self._review(m, d, est, avail)
        s.phase_out[m] &= s.shelf[m] > 0
        cap = int(st.capacity[m])
        spare = cap - int(self._targets(m, est, nxt - d, room=cap, fill=False, safety=False).sum())
        old = np.flatnonzero(s.phase_out[m])
        old = old[np.lexsort((old, -est.mu[m, old]))]  # the best sellers among them stay longest
        keep = np.cumsum(s.shelf[m, old]) <= spare
        out = old[~keep]
        if len(out):
            _batched(session, "delist", [{"device_id": device, "sku_id": st.sku_ids[k]} for k in out.tolist()])
            stale_units = [{"sku_id": st.sku_ids[k], "qty": soon[k]} for k in out.tolist() if soon.get(k)]
            if stale_units:  # the warehouse keeps no unit that expires within 7 days
                _batched(session, "discard", stale_units)
            for k in out.tolist():
                self._returned(k, int(s.shelf[m, k]) - soon.get(k, 0), expiry.get(k, 0), d, avail, wh_next_expiry)
                s.shelf[m, k] = 0
                s.phase_out[m, k] = False
                expiry.pop(k, None)
            delist_items.extend({"sku_id": st.sku_ids[k]} for k in out.tolist())
        # 3. fill from the warehouse (never with units that would expire before the next service): first
        # the carried products' targets, then a facing each of paid-for stock that no machine carries
        # (rather than throwing it away), then the carried products' share of the room left
        usable = avail.copy()
        if long_gap:
            usable[[self._sku_index[it["sku_id"]] for it in delist_items]] = 0
            usable[(wh_next_expiry > 0) & (wh_next_expiry <= nxt)] = 0
        ks = np.flatnonzero(s.active[m])
        free = cap - int(s.shelf[m].sum())
        base = np.maximum(self._targets(m, est, nxt - d, fill=False, safety=False) - s.shelf[m, ks], 0)
        base = _fit(np.minimum(base, usable[ks]), free)
        room = free - int(base.sum())
        clear = np.zeros(0, dtype=np.int64)
        if room >= cfg.facing_units:
            dead = (usable > 0) & ~s.active.any(axis=0) & ~s.dropped[m] & ~s.phase_out[m] & (s.shelf[m] == 0)
            clear = np.flatnonzero(dead)
            clear = clear[np.lexsort((clear, -est.prior[m, clear] * est.margin[m, clear]))]
            clear = clear[: room // cfg.facing_units]
        clear_qty = np.minimum(usable[clear], cfg.facing_units)
        room -= int(clear_qty.sum())
        held = int(s.shelf[m, ~s.active[m]].sum()) + int(clear_qty.sum())
        full = np.maximum(self._targets(m, est, nxt - d, room=cap - held) - s.shelf[m, ks] - base, 0)
        need = base + _fit(np.minimum(full, usable[ks] - base), max(room, 0))
        items = []
        pairs = [*zip(ks.tolist(), need.tolist(), strict=True), *zip(clear.tolist(), clear_qty.tolist(), strict=True)]
        for k, q in pairs:
            if q > 0:
                items.append({"device_id": device, "sku_id": st.sku_ids[k], "qty": int(q)})
                # restocks take the earliest-expiring warehouse units; the ones within 7 days were discarded
                first = int(wh_next_expiry[k]) if wh_next_expiry[k] > d + EXPIRY_WINDOW else unknown
                expiry[k] = min(expiry.get(k, first), first)
        if items:
            for res in _batched(session, "restock", items):
                for acc in res.content.get("accepted", []):
                    k = self._sku_index[acc["sku_id"]]
                    avail[k] -= int(acc["qty"])
                    s.shelf[m, k] += int(acc["qty"])
            s.phase_out[m, clear] = s.shelf[m, clear] > 0  # cleared stock sells down like a dropped product
        if items or reduce_items or delist_items:
            s.last_visit[m] = d
            if not s.first_visit[m] and items:
                s.first_visit[m] = d
        s.must_visit_by[m] = min(expiry.values(), default=0)

    @staticmethod
    def _returned(k: int, units: int, next_exp: int, d: int, avail: IntArray, wh_next_expiry: IntArray) -> None:
        """Book units taken off a shelf (none expiring within 7 days) back into the warehouse.

        They may expire before the warehouse's other units: restocks take them first, so the warehouse's
        next expiry becomes theirs (or, when the shelf's earliest units were the 7-day ones, the first
        day they could expire).
        """
        if units <= 0:
            return
        avail[k] += units
        first = next_exp if next_exp > d + EXPIRY_WINDOW else d + EXPIRY_WINDOW + 1
        wh_next_expiry[k] = first if wh_next_expiry[k] <= 0 else min(int(wh_next_expiry[k]), first)

    def _detail(self, session: ToolSession, m: int) -> list[tuple[int, int, int, int, int]]:
        """The shelf of machine m from get_device_detail: (k, units, expired, expiring 7d, next expiry day).

        It also resets the agent's book of that shelf to what the tool shows.
        """
        s, st = self._s, self._st
        assert s is not None and st is not None
        res = _ok(session.call("get_device_detail", {"device_id": st.device_ids[m], "window_days": 1}), "detail")
        table = res["products"]
        cols = {c: i for i, c in enumerate(table["columns"])}
        out = []
        s.shelf[m] = 0
        for row in table["rows"]:
            units = int(row[cols["units"]])
            if units <= 0:
                continue
            k = self._sku_index[row[cols["sku_id"]]]
            s.shelf[m, k] = units
            out.append(
                (
                    k,
                    units,
                    int(row[cols["expired_units"]]),
                    int(row[cols["expiring_7d_units"]]),
                    int(row[cols["next_expiry_day"]] or 0),
                )
            )
        return out

    # -------------------------------------------------------------------------------- assortment

    def _review(self, m: int, d: int, est: _Estimates, avail: IntArray) -> None:
        """Drop poor sellers, fill free slots (exploring while allowed), swap in clearly better products.

        A carried product is replaced only when the gain expected over the rest of the run (its
        successor's gross profit a day minus its own, from the time the successor can be on the shelf)
        exceeds what replacing it throws away: its units on the shelf and in the warehouse when no other
        machine carries it.
        """
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        if not s.first_visit[m] or d - s.first_visit[m] < cfg.min_trial_days:
            return
        days_left = max(st.horizon - d - st.lead_days - cfg.lead_allowance_days - int(s.cycle[m]), 0)
        score = est.mu[m] * est.margin[m]
        network_expo = s.cum_expo.sum(axis=0)
        carried = s.active.any(axis=0)
        cand_ok = ~s.active[m] & ~s.dropped[m] & ~s.phase_out[m] & (est.margin[m] > 0)
        cand_score = est.prior[m] * est.margin[m]
        pool = np.flatnonzero(cand_ok)
        best_alt = float(cand_score[pool].max()) if len(pool) else 0.0

        def sunk(k: int) -> float:
            if s.active[:, k].sum() > 1:
                return 0.0
            return float((s.shelf[m, k] + avail[k]) * st.cost[k])

        act = np.flatnonzero(s.active[m])
        judged = act[s.cum_expo[m, act] >= cfg.min_trial_days]
        if len(judged) >= 3:
            median = float(np.median(score[judged]))
            poor = judged[score[judged] < cfg.drop_ratio * median]
            poor = poor[np.lexsort((poor, score[poor]))][: cfg.max_drops_per_visit]
            for k in poor.tolist():
                if (best_alt - score[k]) * days_left > sunk(k):
                    self._drop(m, k)
        free = cfg.n_skus - int(s.active[m].sum())
        if free > 0 and d <= cfg.explore_until_day and cfg.explore_slots_per_visit:
            fresh = np.flatnonzero(cand_ok & (network_expo < cfg.proven_exposure_days) & ~carried)
            pick = fresh[np.lexsort((fresh, -cand_score[fresh]))][: min(free, cfg.explore_slots_per_visit)]
            for k in pick.tolist():
                self._add(m, k, d)
                cand_ok[k] = False
            free -= len(pick)
        if free > 0:
            pool = np.flatnonzero(cand_ok)
            pick = pool[np.lexsort((pool, -cand_score[pool]))][:free]
            for k in pick.tolist():
                self._add(m, k, d)
                cand_ok[k] = False
        proven = np.flatnonzero(cand_ok & (network_expo >= cfg.proven_exposure_days))
        proven = proven[np.lexsort((proven, -cand_score[proven]))]
        for k in proven[: cfg.max_swaps_per_visit].tolist():
            act = np.flatnonzero(s.active[m])
            judged = act[s.cum_expo[m, act] >= cfg.min_trial_days]
            if not len(judged):
                break
            worst = int(judged[np.lexsort((judged, score[judged]))][0])
            if cand_score[k] <= cfg.swap_ratio * max(score[worst], 0.0):
                break
            if (cand_score[k] - score[worst]) * days_left <= sunk(worst):
                break
            self._drop(m, worst)
            self._add(m, k, d)

    def _drop(self, m: int, k: int) -> None:
        s = self._s
        assert s is not None
        s.active[m, k] = False
        s.dropped[m, k] = True
        s.phase_out[m, k] = s.shelf[m, k] > 0

    def _add(self, m: int, k: int, d: int) -> None:
        s = self._s
        assert s is not None
        s.active[m, k] = True
        s.active_since[m, k] = d

    # -------------------------------------------------------------------------------- procurement

    def _order(
        self,
        session: ToolSession,
        d: int,
        est: _Estimates,
        warehouse: IntArray,
        transit: IntArray,
        cash: float,
    ) -> None:
        """Echelon order-up-to per product over the machines that carry it (see the module docstring).

        `warehouse`: usable units by product after today's visits.
        """
        s, st, cfg = self._s, self._st, self.config
        assert s is not None and st is not None
        remaining = st.horizon - d
        if remaining < st.lead_days:
            return
        M, K = s.shelf.shape
        L = min(st.lead_days + cfg.lead_allowance_days, remaining)
        cover = min(cfg.order_cover_days, max(remaining - L, 0))
        shelf_target = np.zeros(K)
        for m in range(M):
            ks = np.flatnonzero(s.active[m])
            if len(ks):
                shelf_target[ks] += self._targets(m, est, int(est.cycle[m]))
        act = s.active
        mu_k = np.where(act, est.mu, 0.0).sum(axis=0)
        # a product on trial at a machine is bought for its shelf target only: no lead-time demand, no
        # cover and no safety stock, so that little is left over if the trial fails
        trial = act & (s.cum_expo < cfg.min_trial_days)
        mu = np.where(act & ~trial, est.mu, 0.0)
        mu_plan = mu.sum(axis=0)
        mean_L = mu * L
        var_k = (mean_L + mean_L**2 / est.r[:, None]).sum(axis=0)
        margin_k = np.where(act, est.margin, 0.0).sum(axis=0) / np.maximum(act.sum(axis=0), 1)
        mean_life = mu_k * st.life
        var_life = mean_life + mean_life**2 / cfg.default_dispersion
        p_spoil = unsold_probability(shelf_target + mu_k * (L + cover), mean_life, var_life)
        co = st.rent * (cover + cfg.max_cycle_days / 2.0) + p_spoil * st.cost
        z = newsvendor_z(margin_k, co, cfg.z_max)
        reorder = shelf_target + mu_plan * L + z * np.sqrt(var_k)
        up_to = reorder + mu_plan * cover
        up_to = np.minimum(up_to, shelf_target + cfg.sell_through_share * mean_life)
        position = warehouse + transit + np.where(act, s.shelf, 0).sum(axis=0)
        carried = act.any(axis=0)
        qty = round_lots(np.where(carried & (position < reorder), up_to - position, 0.0), cfg.order_lot)
        ks = np.flatnonzero(qty > 0)
        if not len(ks):
            return
        value = qty[ks] * st.cost[ks]
        budget = cash - cfg.cash_floor
        if value.sum() > budget:  # keep the most valuable lines (margin x rate) within the cash floor
            order = np.lexsort((ks, -(mu_k[ks] * margin_k[ks])))
            keep = order[np.cumsum(value[order]) <= max(budget, 0.0)]
            ks = np.sort(ks[keep])
        items = [{"sku_id": st.sku_ids[k], "qty": int(qty[k])} for k in ks.tolist()]
        if items:
            _batched(session, "place_order", items)

    def _record_exposure(self, d: int) -> None:
        """Today's exposure-days (shelf after today's actions) into the rolling and cumulative books."""
        s, cfg = self._s, self.config
        assert s is not None
        W = cfg.window_days
        e = np.minimum(s.shelf, cfg.facing_units) / float(cfg.facing_units)
        s.expo_hist[d % W] = e
        s.units_hist[d % W] = 0
        s.gp_hist[d % W] = 0.0
        if cfg.memory_half_life_days > 0:  # older sales count less: tastes shift with the seasons
            keep = 0.5 ** (1.0 / cfg.memory_half_life_days)
            s.cum_units *= keep
            s.cum_expo *= keep
        s.cum_expo += e


# ------------------------------------------------------------------------------------------------ helpers


def price_fen_matrix(mult_pct: IntArray, ref_fen: IntArray, band: tuple[float, float]) -> IntArray:
    """(M, K) prices in fen for per-machine multipliers (percent) of the reference prices."""
    return np.stack([price_fen(int(p), ref_fen, band) for p in mult_pct])


def _groups(site: IntArray) -> IntArray:
    """Crossover halves: the machines of each price group alternate 0, 1, 0, ... in world order."""
    out = np.zeros(len(site), dtype=np.int64)
    for g in np.unique(site):
        idx = np.flatnonzero(site == g)
        out[idx] = np.arange(len(idx)) % 2
    return out


def starter_assortment(st: _Static, n: int) -> BoolArray:
    """The opening assortment: n products per machine over every subcategory, highest margin first.

    Slots go to subcategories in proportion to the square root of their size; within a subcategory
    products are ranked by reference margin in CNY (reference price minus unit cost), and machine j
    takes the ranks after those of machine j - 1, so the network tries many different products.
    """
    M, K = len(st.device_ids), len(st.sku_ids)
    out = np.zeros((M, K), dtype=bool)
    sizes = np.bincount(st.l2, minlength=st.n_l2)
    quota = spread_quota(sizes, min(n, K))
    margin = st.ref_fen / 100.0 - st.cost
    for g in range(st.n_l2):
        members = np.flatnonzero(st.l2 == g)
        if not len(members) or not quota[g]:
            continue
        ranked = members[np.lexsort((members, -margin[members]))]
        q = int(quota[g])
        for j in range(M):
            pos = (j * q + np.arange(q)) % len(ranked)
            out[j, ranked[pos]] = True
    return out


def _static_from(
    facts: dict[str, Any],
    band: tuple[float, float],
    horizon: int,
    catalog: list[dict[str, Any]],
    obs: dict[str, Any],
    cal: dict[str, Any],
) -> _Static:
    """The static facts from the prompt facts, catalog rows, the first observation and the calendar."""
    l1_names = sorted({r["category_l1"] for r in catalog})
    l2_names = sorted({r["category_l2"] for r in catalog})
    l1_code = {c: i for i, c in enumerate(l1_names)}
    l2_code = {c: i for i, c in enumerate(l2_names)}
    dev = obs["devices"]
    col = {c: i for i, c in enumerate(dev["columns"])}
    device_ids = [str(r[col["device_id"]]) for r in dev["rows"]]
    sites = [str(r[col["location"]]).split("/", 1)[0] for r in dev["rows"]]
    site_names = sorted(set(sites))
    today = cal["today"]
    first_day = int(today["day"])
    first_weekday = WEEKDAYS.index(today["weekday"])
    n_days = horizon + LOOKAHEAD_DAYS + 2
    days = np.arange(n_days)
    weekday = (first_weekday + days - first_day) % 7
    workday = weekday < 5
    for e in cal["special_days"]:
        if 0 <= int(e["day"]) < n_days:
            workday[int(e["day"])] = bool(e["is_workday"])
    workday[first_day] = bool(today["is_workday"])
    workday[:first_day] = False
    return _Static(
        horizon=horizon,
        visit_fee=_number(facts["visit_fee"]),
        rent=_number(facts["rent"]),
        lead_days=int(facts["lead_days"]),
        band=band,
        sku_ids=[str(r["sku_id"]) for r in catalog],
        ref_fen=np.array([round(float(r["ref_price"]) * 100) for r in catalog], dtype=np.int64),
        cost=np.array([float(r["unit_cost"]) for r in catalog]),
        life=np.array([int(r["shelf_life_days"]) for r in catalog], dtype=np.int64),
        l1=np.array([l1_code[r["category_l1"]] for r in catalog], dtype=np.int64),
        l2=np.array([l2_code[r["category_l2"]] for r in catalog], dtype=np.int64),
        n_l1=len(l1_names),
        n_l2=len(l2_names),
        device_ids=device_ids,
        site=np.array([site_names.index(x) for x in sites], dtype=np.int64),
        site_names=site_names,
        n_site=len(site_names),
        capacity=np.array([int(r[col["capacity"]]) for r in dev["rows"]], dtype=np.int64),
        weekday=weekday.astype(np.int64),
        workday=workday,
    )


def _number(text: Any) -> float:
    return float(str(text).replace(",", ""))


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return list(value)
    return value


def _fit(need: IntArray, free: int) -> IntArray:
    """Scale quantities down (largest remainders) so that they sum to at most `free`."""
    need = np.asarray(need, dtype=np.int64)
    total = int(need.sum())
    if total <= free:
        return need
    if free <= 0:
        return np.zeros_like(need)
    exact = need * (free / total)
    out = np.floor(exact).astype(np.int64)
    left = free - int(out.sum())
    for i in np.lexsort((np.arange(len(need)), -(exact - out))):
        if left <= 0:
            break
        if out[i] < need[i]:
            out[i] += 1
            left -= 1
    return out


def _ok(res: ToolResult, what: str) -> dict[str, Any]:
    """The content of a successful call; a refused call is a bug in the baseline."""
    if not res.ok:
        raise RuntimeError(f"baseline: {what} was refused: {res.error}")
    return res.content


def _all_rows(session: ToolSession, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every row of a paginated tool, as dicts keyed by column."""
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        out = _ok(session.call(tool, {**args, "page": page, "page_size": PAGE}), tool)
        cols = out["columns"]
        rows.extend(dict(zip(cols, r, strict=True)) for r in out["rows"])
        if page >= int(out["pages"]):
            return rows
        page += 1


def _sql_rows(session: ToolSession, sql: str) -> list[list[Any]]:
    """All rows of a SELECT, fetched 500 at a time with LIMIT/OFFSET (the tool returns at most 500)."""
    rows: list[list[Any]] = []
    offset = 0
    while True:
        out = _ok(session.call("query_sql", {"sql": f"{sql} LIMIT {SQL_ROWS} OFFSET {offset}"}), "query_sql")
        rows.extend(out["rows"])
        if len(out["rows"]) < SQL_ROWS:
            return rows
        offset += SQL_ROWS


def _batched(session: ToolSession, tool: str, items: list[dict[str, Any]]) -> list[ToolResult]:
    """Send `items` in batches of at most 100; a refused batch is a bug in the baseline."""
    out = []
    for i in range(0, len(items), BATCH):
        res = session.call(tool, {"items": items[i : i + BATCH]})
        _ok(res, tool)
        out.append(res)
    return out


__all__ = [
    "BaselineAgent",
    "dispersion",
    "newsvendor_z",
    "normal_loss",
    "price_fen",
    "round_lots",
    "shelf_targets",
    "spread_quota",
    "starter_assortment",
    "crossover_arm",
    "crossover_effect",
    "unsold_probability",
]
