"""Day 1: the static facts (published rules, catalog, first observation, calendar) and the opening state."""

from __future__ import annotations

from typing import Any

import numpy as np

from autovend.agents.baseline.assortment import starter_assortment
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.prices import crossover_halves
from autovend.agents.baseline.state import BoolArray, IntArray, State, Static
from autovend.env.types import Rules
from autovend.errors import ConfigError
from autovend.sim.money import FEN_PER_CNY

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")  # get_calendar's names
DAYS_PER_WEEK = len(WEEKDAYS)
WORKING_WEEKDAYS = 5  # Monday to Friday (weekday codes 0-4) are working days unless the calendar says otherwise
LOOKAHEAD_DAYS = 40  # how far the visit schedule is searched


def price_band(rules: Rules, cfg: BaselineConfig) -> tuple[float, float]:
    """The world's price band (multiples of the reference price); the config's multiplier bounds must lie inside."""
    band = rules.price_band
    lo, hi = cfg.multiplier_bounds
    if not band[0] <= lo and hi <= band[1]:
        raise ConfigError(
            f"multiplier_bounds {cfg.multiplier_bounds} leave the price band {band} of this world; "
            "choose bounds inside it"
        )
    return band


def work_calendar(cal: dict[str, Any], horizon: int) -> tuple[IntArray, BoolArray]:
    """Weekday (0 = Monday) and working day by day number, from get_calendar's answer, far enough past the horizon.

    Monday to Friday work unless the calendar lists the day as a holiday; a listed makeup workday works;
    days before today count as days off.
    """
    today = cal["today"]
    first_day = int(today["day"])
    first_weekday = WEEKDAYS.index(today["weekday"])
    n_days = horizon + LOOKAHEAD_DAYS + 2
    days = np.arange(n_days)
    weekday = (first_weekday + days - first_day) % DAYS_PER_WEEK
    workday = weekday < WORKING_WEEKDAYS
    for e in cal["special_days"]:
        if 0 <= int(e["day"]) < n_days:
            workday[int(e["day"])] = bool(e["is_workday"])
    workday[first_day] = bool(today["is_workday"])
    workday[:first_day] = False
    return weekday.astype(np.int64), workday


def static_from(
    rules: Rules,
    band: tuple[float, float],
    catalog: list[dict[str, Any]],
    obs: dict[str, Any],
    cal: dict[str, Any],
) -> Static:
    """The static facts from the published rules, catalog rows, the first observation and the calendar."""
    horizon = rules.horizon_days
    l1_names = sorted({r["category_l1"] for r in catalog})
    l2_names = sorted({r["category_l2"] for r in catalog})
    l1_code = {c: i for i, c in enumerate(l1_names)}
    l2_code = {c: i for i, c in enumerate(l2_names)}
    dev = obs["devices"]
    col = {c: i for i, c in enumerate(dev["columns"])}
    device_ids = [str(r[col["device_id"]]) for r in dev["rows"]]
    sites = [str(r[col["location"]]).split("/", 1)[0] for r in dev["rows"]]
    site_names = sorted(set(sites))
    weekday, workday = work_calendar(cal, horizon)
    return Static(
        horizon=horizon,
        visit_fee=rules.visit_fee,
        rent=rules.warehouse_rent_per_unit_day,
        lead_days=rules.lead_time_days,
        band=band,
        sku_ids=[str(r["sku_id"]) for r in catalog],
        ref_fen=np.array([round(float(r["ref_price"]) * FEN_PER_CNY) for r in catalog], dtype=np.int64),
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
        weekday=weekday,
        workday=workday,
    )


def new_state(st: Static, cfg: BaselineConfig, opening_day: int) -> State:
    """The state before the first day's actions: empty shelves and books, the opening assortment, no trial."""
    M, K, W = len(st.device_ids), len(st.sku_ids), cfg.window_days
    start_pct = round(cfg.start_multiplier * 100)
    if cfg.price_groups == "site_type":
        pgroup, pnames = st.site.copy(), list(st.site_names)
    elif cfg.price_groups == "machine":
        pgroup, pnames = np.arange(M, dtype=np.int64), list(st.device_ids)
    else:
        pgroup, pnames = np.zeros(M, dtype=np.int64), ["network"]
    G = len(pnames)
    s = State(
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
        slot=np.arange(M, dtype=np.int64) % WORKING_WEEKDAYS,  # weekly services spread over Monday-Friday
        must_visit_by=np.zeros(M, dtype=np.int64),
        opening_day=opening_day,
        price_group=pgroup,
        price_group_names=pnames,
        group=crossover_halves(pgroup),
        mult=np.full(G, start_pct, dtype=np.int64),
        cand=np.full(G, start_pct, dtype=np.int64),
        direction=np.ones(G, dtype=np.int64),
        trial_start=np.zeros(G, dtype=np.int64),
        fails=np.zeros(G, dtype=np.int64),
        hold_until=np.zeros(G, dtype=np.int64),
        arm_hist=np.full((W, M), -1, dtype=np.int8),
        gp_sum=np.zeros((M, 2)),
        gp_n=np.zeros((M, 2), dtype=np.int64),
        trials=[],
    )
    s.active[:] = starter_assortment(st, cfg.starter_skus)
    s.active_since[s.active] = opening_day
    return s
